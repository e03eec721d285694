package s3

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Object describes a stored object.
type Object struct {
	Key          string
	Size         int64
	LastModified time.Time
	ETag         string // without its quotes
}

// listPage is one answer of ListObjectsV2.
type listPage struct {
	IsTruncated           bool   `xml:"IsTruncated"`
	NextContinuationToken string `xml:"NextContinuationToken"`
	Contents              []struct {
		Key          string `xml:"Key"`
		Size         int64  `xml:"Size"`
		LastModified string `xml:"LastModified"`
		ETag         string `xml:"ETag"`
	} `xml:"Contents"`
}

// decodeListPage parses a ListObjectsV2 answer (ListBucketResult).
func decodeListPage(r io.Reader) (objects []Object, next string, err error) {
	var p struct {
		listPage
		XMLName xml.Name `xml:"ListBucketResult"`
	}
	if err := decodeXML(r, &p); err != nil {
		return nil, "", err
	}
	for _, o := range p.Contents {
		t, err := time.Parse(time.RFC3339, o.LastModified)
		if err != nil || o.Key == "" || o.Size < 0 {
			return nil, "", fmt.Errorf("%w: listed object %q has a bad key, size or date", errMalformed, o.Key)
		}
		objects = append(objects, Object{Key: o.Key, Size: o.Size, LastModified: t, ETag: unquote(o.ETag)})
	}
	if p.IsTruncated && p.NextContinuationToken == "" {
		return nil, "", fmt.Errorf("%w: a truncated list without a continuation token", errMalformed)
	}
	if p.IsTruncated {
		next = p.NextContinuationToken
	}
	return objects, next, nil
}

func unquote(etag string) string { return strings.Trim(etag, `"`) }

// ErrListTooLong is the error (for errors.Is) of a List that reached
// MaxListPages or MaxListKeys.
var ErrListTooLong = errors.New("s3: list: the listing is too long")

// List returns every object whose key begins with prefix, in key order,
// following ListObjectsV2's continuation tokens across pages (S3 answers
// at most 1,000 keys a page). A listing has an end: at most MaxListPages
// pages and MaxListKeys keys (past them, ErrListTooLong), CallTimeout
// for all its pages together, and a continuation token that comes back
// is an error, as is one longer than 4 KiB.
func (c *Client) List(ctx context.Context, prefix string) ([]Object, error) {
	d := c.newDeadline(ctx)
	defer d.stop()
	var all []Object
	seen := map[string]bool{}
	token := ""
	for pages := 1; ; pages++ {
		if pages > c.listPages {
			return nil, fmt.Errorf("%w: more than %d pages", ErrListTooLong, c.listPages)
		}
		q := url.Values{"list-type": {"2"}}
		if prefix != "" {
			q.Set("prefix", prefix)
		}
		if token != "" {
			q.Set("continuation-token", token)
		}
		if c.maxKeys > 0 {
			q.Set("max-keys", strconv.Itoa(c.maxKeys))
		}
		var page []Object
		var next string
		err := c.do(d.ctx, &request{op: "list", method: http.MethodGet, query: q, retry: retryIdempotent},
			func(resp *http.Response) (err error) {
				page, next, err = decodeListPage(resp.Body)
				return err
			})
		if err != nil {
			return nil, err
		}
		if len(all)+len(page) > c.listKeys {
			return nil, fmt.Errorf("%w: more than %d keys", ErrListTooLong, c.listKeys)
		}
		all = append(all, page...)
		switch {
		case next == "":
			return all, nil
		case len(next) > maxTokenLen:
			return nil, fmt.Errorf("s3: list: %w: a continuation token of %d bytes", errMalformed, len(next))
		case seen[next]:
			return nil, fmt.Errorf("s3: list: %w: continuation token %q repeats", errMalformed, next)
		}
		seen[next] = true
		token = next
	}
}

// Head returns the metadata of key; errors.Is(err, ErrNotFound) when it
// does not exist.
func (c *Client) Head(ctx context.Context, key string) (Object, error) {
	if err := validKey(key); err != nil {
		return Object{}, err
	}
	var obj Object
	err := c.do(ctx, &request{op: "head", method: http.MethodHead, key: key, retry: retryIdempotent},
		func(resp *http.Response) error {
			obj = objectFromHeader(key, resp.Header, resp.ContentLength)
			return nil
		})
	return obj, err
}

func objectFromHeader(key string, h http.Header, size int64) Object {
	t, _ := http.ParseTime(h.Get("Last-Modified"))
	return Object{Key: key, Size: size, LastModified: t, ETag: unquote(h.Get("ETag"))}
}

// Get returns the n bytes of key from offset off (n < 0: to the end) and
// the object's metadata (Size is the whole object's). It asks for a Range
// when off > 0 or n >= 0. A failure before the body is returned is
// retried; one while the caller reads it is the caller's to handle. The
// watchdog and the call's deadline keep running while the body is open:
// a caller that stops reading for longer than Config.Timeout, or reads
// slower than Config.MinRate on average past Config.CallTimeout, gets an
// error at its next read. The caller closes the body, which ends the call.
func (c *Client) Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, Object, error) {
	if err := validKey(key); err != nil {
		return nil, Object{}, err
	}
	if off < 0 {
		return nil, Object{}, fmt.Errorf("s3: get: negative offset %d", off)
	}
	if n == 0 {
		obj, err := c.Head(ctx, key)
		if err != nil {
			return nil, Object{}, err
		}
		return io.NopCloser(strings.NewReader("")), obj, nil
	}
	r := &request{op: "get", method: http.MethodGet, key: key, retry: retryIdempotent, stream: true}
	if off > 0 || n > 0 {
		rng := fmt.Sprintf("bytes=%d-", off)
		if n > 0 {
			rng += strconv.FormatInt(off+n-1, 10)
		}
		r.header = http.Header{"Range": {rng}}
	}
	var body io.ReadCloser
	var obj Object
	err := c.do(ctx, r, func(resp *http.Response) error {
		obj = objectFromHeader(key, resp.Header, resp.ContentLength)
		switch {
		case resp.StatusCode == http.StatusPartialContent:
			obj.Size = contentRangeTotal(resp.Header.Get("Content-Range"))
			if obj.Size < 0 {
				return fmt.Errorf("%w: Content-Range %q", errMalformed, resp.Header.Get("Content-Range"))
			}
			body = resp.Body
		case off > 0:
			return fmt.Errorf("%w: the server ignored the Range of a get", errMalformed)
		case n > 0:
			body = struct {
				io.Reader
				io.Closer
			}{io.LimitReader(resp.Body, n), resp.Body}
		default:
			body = resp.Body
		}
		return nil
	})
	if err != nil {
		return nil, Object{}, err
	}
	return body, obj, nil
}

// contentRangeTotal reads the total of "bytes A-B/TOTAL"; -1 if unknown.
func contentRangeTotal(cr string) int64 {
	i := strings.LastIndexByte(cr, '/')
	if !strings.HasPrefix(cr, "bytes ") || i < 0 {
		return -1
	}
	return parseSize(cr[i+1:])
}

// Put stores a small object (at most MaxPutSize bytes) in one PutObject.
// It replaces an object of the same key.
func (c *Client) Put(ctx context.Context, key string, body []byte, contentType string) error {
	if len(body) > MaxPutSize {
		return fmt.Errorf("s3: put: %d bytes is over Put's %d: use Upload", len(body), MaxPutSize)
	}
	return c.put(ctx, "put", key, body, contentType)
}

func (c *Client) put(ctx context.Context, op, key string, body []byte, contentType string) error {
	if err := validKey(key); err != nil {
		return err
	}
	r := &request{op: op, method: http.MethodPut, key: key, body: body, retry: retryIdempotent}
	if contentType != "" {
		r.header = http.Header{"Content-Type": {contentType}}
	}
	return c.do(ctx, r, discard)
}

func discard(resp *http.Response) error {
	_, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxXMLAnswer))
	return err
}

// Delete removes key. Deleting a key that does not exist is not an error:
// S3 answers 204 either way, and some compatible servers 404, which
// Delete takes as done too, so that a retried Delete whose first try did
// succeed ends well. A caller that must report a missing key asks Head.
func (c *Client) Delete(ctx context.Context, key string) error {
	if err := validKey(key); err != nil {
		return err
	}
	return c.do(ctx, &request{op: "delete", method: http.MethodDelete, key: key, retry: retryIdempotent,
		okStatus: []int{http.StatusNotFound}}, discard)
}

// pendingUpload is an unfinished multipart upload.
type pendingUpload struct {
	Key      string `xml:"Key"`
	UploadID string `xml:"UploadId"`
}

// listMultipartUploads returns the unfinished multipart uploads under
// prefix (one page: the tests that use it leave a handful at most).
func (c *Client) listMultipartUploads(ctx context.Context, prefix string) ([]pendingUpload, error) {
	q := url.Values{"uploads": {""}}
	if prefix != "" {
		q.Set("prefix", prefix)
	}
	var x struct {
		XMLName xml.Name        `xml:"ListMultipartUploadsResult"`
		Uploads []pendingUpload `xml:"Upload"`
	}
	err := c.do(ctx, &request{op: "list uploads", method: http.MethodGet, query: q, retry: retryIdempotent},
		func(resp *http.Response) error { return decodeXML(resp.Body, &x) })
	return x.Uploads, err
}
