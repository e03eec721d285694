package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// The reproduction of a failure: the request that showed it as a curl
// command line a reader can run, preceded by the commands that obtain the
// tokens it carries. Tokens never appear: the superuser's is $TOKEN,
// obtained by a login as the superuser the suite was given, with its
// password as $PASSWORD; one the check obtained from an answer (a user's
// login, a file token, an impersonation) is a variable set by the request
// that answered it, sent again. Only curl and sed are needed.

// sentRequest is one request as the suite sent it, whole, so that the
// report can give the command that sends it again.
type sentRequest struct {
	method, path string
	header       http.Header // the check's headers, and Content-Type
	body         []byte      // nil: none
	// recipe, for a body streamed from a reader (streamBody), is a shell
	// command that writes the body on its standard output.
	recipe string
	// bodyLen is the length of a streamed body.
	bodyLen int64
}

// newSentRequest records what send sends: the headers hdr the check gave,
// the Content-Type ctype and body (url.Values, rawBody, streamBody or JSON).
func newSentRequest(method, path string, hdr http.Header, ctype string, body any) *sentRequest {
	s := &sentRequest{method: method, path: path, header: hdr.Clone()}
	if s.header == nil {
		s.header = http.Header{}
	}
	if ctype != "" && s.header.Get("Content-Type") == "" {
		s.header.Set("Content-Type", ctype)
	}
	if sb, ok := body.(streamBody); ok {
		s.recipe, s.bodyLen = sb.recipe, sb.n
		return s
	}
	if open, _, err := requestBody(body); err == nil && body != nil {
		s.body, _ = io.ReadAll(open())
		if s.body == nil {
			s.body = []byte{}
		}
	}
	return s
}

// recordAnswer notes what an answer to s tells a later reproduction: a
// token in it (the login, refresh, impersonation or file token that
// obtained it), and a sign-up (a POST to a records route answered 200
// with the email of the record).
func (c *Client) recordAnswer(s *sentRequest, status int, body []byte) {
	if status != http.StatusOK {
		return
	}
	var out struct {
		Token string `json:"token"`
	}
	var in struct {
		Email string `json:"email"` // the answer to a guest may hide it
	}
	json.Unmarshal(body, &out)
	if s.method == http.MethodPost && strings.HasSuffix(pathOnly(s.path), "/records") {
		json.Unmarshal(s.body, &in)
	}
	c.lastMu.Lock()
	defer c.lastMu.Unlock()
	if out.Token != "" && out.Token != c.su && out.Token != c.given {
		if c.tokens == nil {
			c.tokens = map[string]*sentRequest{}
		}
		c.tokens[out.Token] = s
	}
	if in.Email != "" {
		if c.signups == nil {
			c.signups = map[string]*sentRequest{}
		}
		c.signups[in.Email] = s
	}
}

// pathOnly returns path without its query.
func pathOnly(path string) string {
	p, _, _ := strings.Cut(path, "?")
	return p
}

// reproduction returns the commands that send the check's latest request
// again against the server at c.base, or "" when it sent none. A line
// starting with # explains the one after it.
func (c *Client) reproduction() string {
	c.lastMu.Lock()
	defer c.lastMu.Unlock()
	if c.lastSent == nil {
		return ""
	}
	return c.reproductionOf(c.lastSent)
}

// reproductionOf returns the commands that send s again; the caller holds
// c.lastMu, or c is the caller's alone.
func (c *Client) reproductionOf(s *sentRequest) string {
	rp := &repro{c: c, vars: map[string]string{}}
	final := rp.command(s, 0)
	return strings.Join(append(rp.lines, final), "\n")
}

// repro builds one reproduction: the lines before the final command (the
// token steps), and the variable each token became.
type repro struct {
	c     *Client
	lines []string
	vars  map[string]string // token → its variable name
	n     int               // variables so far
	pw    bool              // $PASSWORD has been explained
	// hidden maps the markers of the token query parameters no answer
	// carried to their variables (hideQueryTokens).
	hidden map[string]string
}

// maxTokenSteps bounds the chain of token steps (a token obtained with a
// token obtained with a token…).
const maxTokenSteps = 4

// sedToken is the sed program that prints the "token" of a JSON answer.
const sedToken = `sed -n 's/.*"token" *: *"\([^"]*\)".*/\1/p'`

// command renders s as a curl command; depth counts the token steps
// above it.
func (rp *repro) command(s *sentRequest, depth int) string {
	var pre []string // commands on the same line before curl (a body's recipe)
	args := []string{"curl", "-sS"}
	if depth == 0 {
		args = append(args, "-i") // the status and headers show the deviation
	}
	args = append(args, "--globoff", "--path-as-is")
	switch s.method {
	case http.MethodGet:
	case http.MethodHead:
		args = append(args, "-I")
	default:
		args = append(args, "-X", shellQuote(s.method))
	}
	args = append(args, rp.word(rp.c.base+rp.hideQueryTokens(s.path), depth))
	keys := make([]string, 0, len(s.header))
	for k := range s.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	multi := isMultipart(s)
	for _, k := range keys {
		if multi && k == "Content-Type" {
			continue // curl -F makes its own, with its boundary
		}
		for _, v := range s.header[k] {
			if k == "User-Agent" {
				args = append(args, "-A", rp.word(v, depth))
				continue
			}
			args = append(args, "-H", rp.word(k+": "+v, depth))
		}
	}
	switch {
	case s.recipe != "":
		pre = append(pre, s.recipe, "|")
		args = append(args, "--data-binary", "@-")
	case s.body == nil:
	case multi:
		args = append(args, rp.formArgs(s, depth)...)
	case len(s.body) > maxInlineBody || !isText(s.body) && len(s.body) > maxRecipe:
		rp.lines = append(rp.lines, fmt.Sprintf("# body: the %d bytes the check sent, not pasted (%s): "+
			"put a body of your own of that kind in the file body", len(s.body), bodyText(s.body, 60)))
		args = append(args, "--data-binary", "@body")
	case isText(s.body) && !bytes.ContainsAny(s.body, "\r\n"):
		args = append(args, "--data-raw", rp.word(string(s.body), depth))
	default:
		pre = append(pre, printfRecipe(s.body), "|")
		args = append(args, "--data-binary", "@-")
	}
	return strings.Join(append(pre, args...), " ")
}

// maxInlineBody bounds a body pasted into the command line.
const maxInlineBody = 16 << 10

// word quotes s for the shell, each token and password in it replaced by
// its variable (and the steps that set it added to rp.lines).
func (rp *repro) word(s string, depth int) string {
	// A password is replaced where it is a JSON string (a login's body),
	// its quotes kept: a short one could be part of anything else.
	type secret struct {
		value, ref string
		quoted     bool // value is a JSON string: keep its quotes
	}
	var secrets []secret
	c := rp.c
	for _, pw := range []string{c.password, c.givenPassword} {
		if q := jsonText(pw); pw != "" && strings.Contains(s, q) {
			secrets = append(secrets, secret{q, rp.password(), true})
		}
	}
	for _, tok := range []string{c.su, c.given} {
		if tok != "" && strings.Contains(s, tok) {
			secrets = append(secrets, secret{tok, rp.superuserToken(), false})
		}
	}
	for tok, from := range c.tokens {
		if strings.Contains(s, tok) {
			secrets = append(secrets, secret{tok, rp.token(tok, from, depth), false})
		}
	}
	for tok, v := range rp.hidden {
		if strings.Contains(s, tok) {
			secrets = append(secrets, secret{tok, v, false})
		}
	}
	if c.email != c.givenEmail && c.givenEmail != "" {
		// The throwaway superuser is gone when the report is read: the
		// superuser the suite was given stands in for it.
		s = strings.ReplaceAll(s, c.email, c.givenEmail)
	}
	// Longest first, so that a token containing another is replaced whole.
	slices.SortFunc(secrets, func(a, b secret) int { return len(b.value) - len(a.value) })
	var out strings.Builder
	lit := "" // literal text not yet written
	for {
		at, which := len(s), -1
		for i, sec := range secrets {
			if j := strings.Index(s, sec.value); j >= 0 && j < at {
				at, which = j, i
			}
		}
		lit += s[:at]
		if which < 0 {
			break
		}
		sec := secrets[which]
		s = s[at+len(sec.value):]
		if sec.quoted {
			lit += `"`
		}
		if lit != "" {
			out.WriteString(shellQuote(lit))
		}
		out.WriteString(`"$` + sec.ref + `"`)
		lit = ""
		if sec.quoted {
			lit = `"`
		}
	}
	if lit != "" || out.Len() == 0 {
		out.WriteString(shellQuote(lit))
	}
	return out.String()
}

// password returns the variable of the superuser's password, explaining
// it the first time.
func (rp *repro) password() string {
	if !rp.pw {
		rp.pw = true
		rp.lines = append(rp.lines, "# PASSWORD: the password of the superuser "+rp.c.givenEmail+
			" (set it first, e.g. PASSWORD=$CONFORMANCE_PASSWORD; a \" or \\ in it written as in JSON)")
	}
	return "PASSWORD"
}

// superuserToken returns the variable of the superuser's token, adding
// the login that sets it the first time.
func (rp *repro) superuserToken() string {
	const key = "\x00superuser"
	if v, ok := rp.vars[key]; ok {
		return v
	}
	v := rp.newVar()
	rp.vars[key] = v
	// With the suite's User-Agent, from the suite's host, the login is from
	// a device the superuser has used: no new-login alert mail.
	login := &sentRequest{method: http.MethodPost, path: "/api/collections/_superusers/auth-with-password",
		header: http.Header{"Content-Type": {"application/json"}, "User-Agent": {userAgent}}}
	login.body, _ = json.Marshal(map[string]string{"identity": rp.c.givenEmail, "password": rp.c.givenPassword})
	cmd := rp.command(login, maxTokenSteps) // no token in it
	rp.lines = append(rp.lines, fmt.Sprintf("# %s: POST /api/collections/_superusers/auth-with-password as %s → .token",
		v, rp.c.givenEmail), v+"=$("+cmd+" | "+sedToken+")")
	return v
}

// token returns the variable of tok, which the answer to from carried,
// adding the steps that set it the first time.
func (rp *repro) token(tok string, from *sentRequest, depth int) string {
	if v, ok := rp.vars[tok]; ok {
		return v
	}
	v := rp.newVar()
	rp.vars[tok] = v
	if depth >= maxTokenSteps {
		rp.lines = append(rp.lines, "# "+v+": a token obtained by a chain of requests too long to repeat here")
		return v
	}
	var who string
	var body map[string]any
	if json.Unmarshal(from.body, &body) == nil {
		if id, ok := body["identity"].(string); ok {
			who = " as " + id
			if up := rp.c.signups[id]; up != nil {
				rp.lines = append(rp.lines, "# the check signed "+id+" up (and deleted it afterwards):",
					rp.command(up, depth+1)+" >/dev/null")
			}
		}
	}
	cmd := rp.command(from, depth+1)
	rp.lines = append(rp.lines, fmt.Sprintf("# %s: %s %s%s → .token", v, from.method, redactPath(pathOnly(from.path)), who),
		v+"=$("+cmd+" | "+sedToken+")")
	return v
}

// hideQueryTokens returns path with the value of each token query
// parameter that no recorded answer carried (a file token the check made
// up) replaced by a marker that word turns into a variable, so that it is
// not shown either.
func (rp *repro) hideQueryTokens(path string) string {
	p, q, ok := strings.Cut(path, "?")
	if !ok {
		return path
	}
	parts := strings.Split(q, "&")
	for i, part := range parts {
		k, v, _ := strings.Cut(part, "=")
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		c := rp.c
		if err1 != nil || err2 != nil || !strings.EqualFold(key, "token") || val == "" ||
			c.tokens[val] != nil || val == c.su || val == c.given {
			continue
		}
		marker := fmt.Sprintf("\x00hidden%d\x00", len(rp.hidden))
		name := rp.newVar()
		if rp.hidden == nil {
			rp.hidden = map[string]string{}
		}
		rp.hidden[marker] = name
		rp.lines = append(rp.lines, "# "+name+": the token query parameter the check sent, not shown (no answer "+
			"the suite recorded carried it): set it first")
		parts[i] = k + "=" + marker
	}
	return p + "?" + strings.Join(parts, "&")
}

// newVar names the next token variable: TOKEN, TOKEN2, TOKEN3…
func (rp *repro) newVar() string {
	rp.n++
	if rp.n == 1 {
		return "TOKEN"
	}
	return fmt.Sprintf("TOKEN%d", rp.n)
}

// isMultipart reports whether s carries a multipart/form-data body.
func isMultipart(s *sentRequest) bool {
	mt, _, err := mime.ParseMediaType(s.header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data" && s.body != nil
}

// safeFileName is a file name that needs no quoting in curl's -F.
var safeFileName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// formArgs renders a multipart body as curl -F arguments: each field as
// --form-string, each file as @NAME with its file name and type, the
// commands that make the files added to rp.lines.
func (rp *repro) formArgs(s *sentRequest, depth int) []string {
	_, params, _ := mime.ParseMediaType(s.header.Get("Content-Type"))
	mr := multipart.NewReader(bytes.NewReader(s.body), params["boundary"])
	var args []string
	for n := 1; ; n++ {
		p, err := mr.NextPart()
		if err != nil {
			if err != io.EOF {
				rp.lines = append(rp.lines, "# the rest of the multipart body could not be read back: "+err.Error())
			}
			return args
		}
		data, _ := io.ReadAll(p)
		// The file name as sent: FileName keeps only its last element.
		_, disp, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		name, isFile := disp["filename"]
		if !isFile {
			args = append(args, "--form-string", rp.word(p.FormName()+"="+string(data), depth))
			continue
		}
		local := name
		if !safeFileName.MatchString(local) || len(local) > 64 {
			local = fmt.Sprintf("upload%d", n)
		}
		spec := p.FormName() + "=@" + local
		if local != name {
			spec += `;filename="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
		}
		if ct := p.Header.Get("Content-Type"); ct != "" {
			spec += ";type=" + ct
		}
		args = append(args, "-F", shellQuote(spec))
		rp.lines = append(rp.lines, fileRecipe(local, data)...)
	}
}

// maxRecipe bounds a file or a body that is not text written out byte for
// byte with printf; a larger one is described.
const maxRecipe = 512

// fileRecipe returns the lines that make the file name holding data: a
// printf of its bytes, or, for a larger file, what it held.
func fileRecipe(name string, data []byte) []string {
	if len(data) <= maxRecipe {
		return []string{"# " + name + ": the file the check uploaded, " + fmt.Sprint(len(data)) + " bytes",
			printfRecipe(data) + " > " + name}
	}
	kind := "bytes"
	if bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		kind = "a zip archive"
	}
	return []string{fmt.Sprintf("# %s: the file the check uploaded, %s of %d bytes, not pasted (%s): "+
		"put a file of your own of that kind there", name, kind, len(data), bodyText(data, 60))}
}

// printfRecipe returns a printf command that writes data exactly: bytes
// outside printable ASCII, and the quote, backslash and percent sign, as
// printf escapes, all inside single quotes.
func printfRecipe(data []byte) string {
	var b strings.Builder
	b.WriteString("printf '")
	for i, c := range data {
		switch {
		case i == 0 && c == '-': // not an option
			b.WriteString(`\055`)
		case c == '%':
			b.WriteString("%%")
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\'':
			b.WriteString(`\047`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
	return b.String()
}

// shellQuote quotes s as one word for a POSIX shell: inside single
// quotes, where nothing is special but the single quote itself, written
// as '\”.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
