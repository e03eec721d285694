package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"strongbox/authn/validation"
)

// body is a decoded request body: JSON values, or form values (all strings).
type body struct {
	vals     map[string]any
	form     bool
	files    []string // the names of a multipart body's file parts, sorted
	repeated []string // the form keys sent more than once (vals has the first)
}

// bind reads the request body as PocketBase's binder does: an empty body
// binds nothing; application/json must be a JSON object; urlencoded and
// multipart forms bind their values, merged with the URL's query values as
// Go's Request.Form does (and a "@jsonPayload" field holding a JSON object
// is decoded on top). Any other content type with a body is refused.
func bind(r *http.Request) (*body, error) {
	b := &body{vals: map[string]any{}}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		data, err := readAll(r)
		if err != nil {
			return nil, readError(err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return b, nil
		}
		if err := checkJSONShape(r, data); err != nil {
			return nil, err
		}
		if err := decodeJSONObject(data, &b.vals); err != nil {
			return nil, errBadRequest(msgLoadFailed, err)
		}
	case "application/x-www-form-urlencoded", "multipart/form-data":
		b.form = true
		var err error
		if ct == "multipart/form-data" {
			// With as much memory as the route's body limit, no part
			// spills to a temporary file; the forms are removed at the end
			// of the request anyway (withState).
			st := stateOf(r)
			err = r.ParseMultipartForm(st.limits.Body)
			if r.MultipartForm != nil {
				st.forms = append(st.forms, r.MultipartForm)
				b.files = slices.Sorted(maps.Keys(r.MultipartForm.File))
			}
		} else {
			err = r.ParseForm()
		}
		if err != nil {
			return nil, readError(err)
		}
		for k, v := range r.Form {
			if len(v) > 0 {
				b.vals[k] = v[0]
			}
			if len(r.PostForm[k]) > 1 {
				b.repeated = append(b.repeated, k)
			}
		}
		if p, ok := b.vals["@jsonPayload"].(string); ok {
			delete(b.vals, "@jsonPayload")
			var extra map[string]any
			if err := checkJSONShape(r, []byte(p)); err != nil {
				return nil, err
			}
			if err := decodeJSONObject([]byte(p), &extra); err != nil {
				return nil, errBadRequest(msgLoadFailed, err)
			}
			for k, v := range extra {
				b.vals[k] = v
			}
			b.form = false
		}
	default:
		n, err := r.Body.Read(make([]byte, 1))
		if n > 0 {
			return nil, errBadRequest(msgUnsupportedType, nil)
		}
		if err != nil && err != io.EOF {
			return nil, readError(err)
		}
	}
	return b, nil
}

// refuseUnstored is the failure of a record body that carries what a
// record cannot store, msg its message: a file part (strongbox stores no
// files; PocketBase would store a file field's part and ignore any other)
// or a form key sent more than once (a field holds one value; PocketBase
// would turn the values into a list and keep none). Each is a field error
// naming it, never a key dropped from a 200.
func (b *body) refuseUnstored(msg string) error {
	if len(b.files) == 0 && len(b.repeated) == 0 {
		return nil
	}
	errs := validation.Errors{}
	for _, name := range b.repeated {
		errs[name] = validation.New(validation.CodeUnsupportedValue, "The field was sent more than once; a record field holds one value.")
	}
	for _, name := range b.files {
		errs[name] = validation.FileUnsupported()
	}
	return errValidation(msg, errs)
}

// readAll reads the whole body into a buffer that grows with the bytes
// received, doubling from 512 bytes but never past the declared length: a
// body that stalls holds a buffer of at most twice the bytes it sent (and
// the budget has taken those bytes), not one of the length it declared.
func readAll(r *http.Request) ([]byte, error) {
	return readGrowing(r.Body, r.ContentLength)
}

// readGrowing reads rd to its end; size is the expected length, or
// negative if unknown.
func readGrowing(rd io.Reader, size int64) ([]byte, error) {
	c := int64(512)
	if size >= 0 && size < c {
		c = size + 1 // +1: room to read the end
	}
	buf := make([]byte, 0, c)
	for {
		if len(buf) == cap(buf) {
			c := 2 * cap(buf)
			if size > int64(len(buf)) && int64(c) > size {
				c = int(size) + 1
			}
			buf = slices.Grow(buf, c-len(buf))
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// readError is the error of a failed read of the body: the route's own
// (deadline, budget, limit) as they are, any other a loading error.
func readError(err error) error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return err
	}
	return errBadRequest(msgLoadFailed, err)
}

// The shape a JSON request body may have, checked before it is decoded
// (checkJSONShape): decoding makes a value for each element, and a map or
// a slice costs many times the two or three bytes of "{}," that made it.
const (
	// maxJSONValues bounds the '{', '[' and ',' of a body outside its
	// strings: a body decodes to at most one more value than that. The
	// users collection as served, with a hundred text fields added, has
	// 1,478; the settings as served 63 (and 6 more per rate limit rule).
	maxJSONValues = 10000
	// maxJSONDepth bounds the nesting of objects and arrays.
	maxJSONDepth = 64
	// jsonValueCost is what one value is charged in the body budget on
	// top of the body's bytes. Together they cover what the body holds
	// once read and decoded into map[string]any within a factor of 2.1
	// (TestDecodedBodyMemory): an empty map or a number costs 15 to 40
	// bytes, an object of one key about 360 (but it is two values and at
	// least seven bytes), a string its bytes again.
	jsonValueCost = 128
)

// checkJSONShape checks data, a JSON request body about to be decoded,
// against maxJSONValues and maxJSONDepth, and takes the cost of its values
// from the body budget (requestBody.take), so that the budget bounds the
// decoded bodies as it does their bytes. Past a limit the body is a
// loading error, like any malformed body; the cause goes to the log. Every
// JSON request body goes through it before it is decoded.
func checkJSONShape(r *http.Request, data []byte) error {
	values, depth := jsonShape(data, maxJSONValues, maxJSONDepth)
	if values > maxJSONValues {
		return errBadRequest(msgLoadFailed, fmt.Errorf("JSON body with more than %d values", maxJSONValues))
	}
	if depth > maxJSONDepth {
		return errBadRequest(msgLoadFailed, fmt.Errorf("JSON body nested deeper than %d", maxJSONDepth))
	}
	if b, ok := r.Body.(*requestBody); ok {
		return b.take(int64(values+1) * jsonValueCost)
	}
	return nil
}

// jsonShape counts, in one pass over data, the '{', '[' and ',' outside
// strings (values) and the deepest nesting of '{' and '[' (depth), and
// stops as soon as either passes its max. It does not validate: a
// malformed body is the decoder's to refuse, and it counts it as if the
// structural characters were where they are.
func jsonShape(data []byte, maxValues, maxDepth int) (values, depth int) {
	open, inString, escaped := 0, false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			values++
			if open++; open > depth {
				depth = open
			}
		case '}', ']':
			open--
		case ',':
			values++
		default:
			continue
		}
		if values > maxValues || depth > maxDepth {
			return values, depth
		}
	}
	return values, depth
}

// decodeJSONObject decodes data, which must be one JSON object and
// nothing else but white space, and whose shape checkJSONShape has
// checked. json.Unmarshal decodes in place, where a json.Decoder would
// first copy the whole body into its own buffer.
func decodeJSONObject(data []byte, v *map[string]any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return err
	}
	if *v == nil {
		return errors.New("body is not a JSON object")
	}
	return nil
}

// str returns the string value of key ("" when absent or null). A value of
// another JSON type is a loading error, as Go's decoder into a string field
// makes it in PocketBase.
func (b *body) str(key string) (string, error) {
	switch v := b.vals[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", errBadRequest(msgLoadFailed, nil)
}

// strs returns the string values of keys, in their order, as str does;
// the first value of another JSON type is the error.
func (b *body) strs(keys ...string) ([]string, error) {
	vals := make([]string, len(keys))
	for i, key := range keys {
		v, err := b.str(key)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	return vals, nil
}

// int64 returns the integer value of key (0 when absent).
func (b *body) int64(key string) (int64, error) {
	switch v := b.vals[key].(type) {
	case nil:
		return 0, nil
	case float64:
		if v == float64(int64(v)) {
			return int64(v), nil
		}
	case string:
		if b.form {
			if strings.TrimSpace(v) == "" {
				return 0, nil
			}
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n, nil
			}
		}
	}
	return 0, errBadRequest(msgLoadFailed, nil)
}
