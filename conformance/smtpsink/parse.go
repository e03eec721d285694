package smtpsink

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"time"
)

// parse returns m with the message raw and what parsing it as RFC 5322
// with MIME parts finds.
func parse(m Mail, raw []byte) *Mail {
	m.Data = raw
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		m.ParseErr = err
		m.Text = string(raw)
		return &m
	}
	m.Header = msg.Header
	dec := new(mime.WordDecoder)
	if subj, err := dec.DecodeHeader(msg.Header.Get("Subject")); err == nil {
		m.Subject = subj
	} else {
		m.Subject = msg.Header.Get("Subject")
	}
	var texts []string
	m.ParseErr = collectText(partHeader(msg.Header), msg.Body, 0, &texts)
	m.Text = strings.Join(texts, "\n")
	return &m
}

// partHeader adapts a mail.Header to the lookups collectText makes.
type partHeader map[string][]string

func (h partHeader) get(key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// collectText appends the decoded text of every text/* part of a body with
// header h to texts, descending into multipart bodies (at most 5 deep).
func collectText(h partHeader, body io.Reader, depth int, texts *[]string) error {
	ctype := h.get("Content-Type")
	if ctype == "" {
		ctype = "text/plain"
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		return fmt.Errorf("Content-Type %q: %w", ctype, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		if depth >= 5 {
			return errors.New("multipart nested too deep")
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("multipart: %w", err)
			}
			// NextPart already decodes a quoted-printable part (and drops
			// its Content-Transfer-Encoding).
			if err := collectText(partHeader(p.Header), p, depth+1, texts); err != nil {
				return err
			}
		}
	}
	if !strings.HasPrefix(mt, "text/") {
		return nil
	}
	var r io.Reader = body
	switch strings.ToLower(strings.TrimSpace(h.get("Content-Transfer-Encoding"))) {
	case "quoted-printable":
		r = quotedprintable.NewReader(body)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, newlineStripper{body})
	}
	b, err := io.ReadAll(io.LimitReader(r, maxMessage))
	if err != nil {
		return fmt.Errorf("%s part: %w", mt, err)
	}
	*texts = append(*texts, string(b))
	return nil
}

// newlineStripper drops CR and LF, as base64 bodies are line-wrapped.
type newlineStripper struct{ r io.Reader }

func (n newlineStripper) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	j := 0
	for _, c := range p[:k] {
		if c != '\r' && c != '\n' {
			p[j] = c
			j++
		}
	}
	return j, err
}

// certificate makes a self-signed certificate for 127.0.0.1 and
// localhost, and a pool that trusts it.
func certificate() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "smtpsink"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}
