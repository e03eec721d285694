package s3

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// AWS Signature Version 4, written by hand over crypto/hmac and
// crypto/sha256 (the project takes no AWS SDK): a canonical request, a
// string to sign over its hash, a signing key derived per date, region and
// service, and an Authorization header naming the signed headers.

const (
	sigAlgorithm = "AWS4-HMAC-SHA256"
	amzDate      = "20060102T150405Z"
	// emptySHA256 is the SHA-256 of an empty payload, the
	// x-amz-content-sha256 of every request without a body.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// credentials are what signs a request: the access key pair, and the
// region and service of the credential scope.
type credentials struct {
	accessKey, secret, region, service string
}

// signed is the outcome of signing: the intermediate texts (kept for the
// test vectors, which publish each of them) and the Authorization header.
type signed struct {
	canonicalRequest, stringToSign, authorization string
}

// sign computes the signature of a request. path is the canonical URI,
// already encoded (see encodePath); query is signed sorted and encoded;
// header holds the headers to sign (host included), by any case of name;
// payloadHash is the hex SHA-256 of the body.
func (c credentials) sign(method, path string, query url.Values, header http.Header, payloadHash string, t time.Time) signed {
	t = t.UTC()
	names, canonHeaders := canonicalHeaders(header)
	creq := strings.Join([]string{
		method,
		path,
		canonicalQuery(query),
		canonHeaders,
		names,
		payloadHash,
	}, "\n")
	date := t.Format("20060102")
	scope := date + "/" + c.region + "/" + c.service + "/aws4_request"
	sum := sha256.Sum256([]byte(creq))
	sts := sigAlgorithm + "\n" + t.Format(amzDate) + "\n" + scope + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+c.secret), date)
	key = hmacSHA256(key, c.region)
	key = hmacSHA256(key, c.service)
	key = hmacSHA256(key, "aws4_request")
	sig := hex.EncodeToString(hmacSHA256(key, sts))
	return signed{
		canonicalRequest: creq,
		stringToSign:     sts,
		authorization: sigAlgorithm + " Credential=" + c.accessKey + "/" + scope +
			", SignedHeaders=" + names + ", Signature=" + sig,
	}
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// canonicalHeaders returns the signed-headers list and the canonical
// headers block (each "name:value\n", names lowercased and sorted, values
// trimmed with inner runs of spaces folded to one, repeated headers joined
// by commas in their order).
func canonicalHeaders(h http.Header) (names, block string) {
	lower := make(map[string][]string, len(h))
	keys := make([]string, 0, len(h))
	for k, vs := range h {
		lk := strings.ToLower(k)
		if _, ok := lower[lk]; !ok {
			keys = append(keys, lk)
		}
		lower[lk] = append(lower[lk], vs...)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		vals := make([]string, len(lower[k]))
		for i, v := range lower[k] {
			vals[i] = strings.Join(strings.Fields(v), " ")
		}
		b.WriteString(k + ":" + strings.Join(vals, ",") + "\n")
	}
	return strings.Join(keys, ";"), b.String()
}

// canonicalQuery encodes each name and value with uriEncode and sorts the
// pairs by name, then value.
func canonicalQuery(q url.Values) string {
	pairs := make([]string, 0, len(q))
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, uriEncode(k, true)+"="+uriEncode(v, true))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

// encodePath is the canonical URI of an S3 path: every byte but the
// unreserved ones (A–Z a–z 0–9 - . _ ~) percent-encoded, "/" kept. Unlike
// other AWS services, S3 neither normalizes the path nor encodes it twice,
// so a key such as "a//b/../c" is signed as it is sent.
func encodePath(p string) string { return uriEncode(p, false) }

// uriEncode percent-encodes s as SigV4 asks (uppercase hex); a "/" is
// encoded only when slash is true.
func uriEncode(s string, slash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '/' && !slash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}
