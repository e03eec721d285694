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
	"time"
)

// abortTimeout bounds the AbortMultipartUpload of a failed Upload, which
// runs on its own context: the caller's may be the reason of the failure.
const abortTimeout = 30 * time.Second

// Upload stores what r yields under key, streamed: a body that fits in one
// part goes in one PutObject; a larger one in a multipart upload (Create,
// UploadPart for each part with the part's real SHA-256 as its
// x-amz-content-sha256, Complete). At most two parts are buffered: one
// being sent while the next is read. Each part is retried on its own; the
// whole upload never is. On any error, r's included, or when ctx ends,
// the multipart upload is aborted, so the bucket keeps no partial or
// orphaned upload; the object becomes visible under key only at Complete.
func (c *Client) Upload(ctx context.Context, key string, r io.Reader, contentType string) (Object, error) {
	if err := validKey(key); err != nil {
		return Object{}, err
	}
	first := make([]byte, c.partSize)
	n, err := io.ReadFull(r, first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if err := c.put(ctx, "upload", key, first[:n], contentType); err != nil {
			return Object{}, err
		}
		return Object{Key: key, Size: int64(n), LastModified: c.now().UTC()}, nil
	case err != nil:
		return Object{}, fmt.Errorf("s3: upload: read: %w", err)
	}
	id, err := c.createUpload(ctx, key, contentType)
	if err != nil {
		return Object{}, err
	}
	obj, err := c.sendParts(ctx, key, id, r, first)
	if err != nil {
		if aerr := c.abort(ctx, key, id); aerr != nil {
			err = errors.Join(err, aerr)
		}
		return Object{}, err
	}
	return obj, nil
}

// sendParts uploads first and the rest of r as the parts of upload id,
// then completes it.
func (c *Client) sendParts(ctx context.Context, key, id string, r io.Reader, first []byte) (Object, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type part struct {
		num  int
		data []byte
	}
	free := make(chan []byte, 2) // room for both buffers: the sender never waits on it
	free <- make([]byte, c.partSize)
	work := make(chan part)
	var done []completedPart
	var sendErr error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for p := range work {
			etag, err := c.uploadPart(ctx, key, id, p.num, p.data)
			if err != nil {
				sendErr = err
				cancel(err)
				return
			}
			done = append(done, completedPart{Number: p.num, ETag: etag})
			free <- p.data[:cap(p.data)]
		}
	}()
	size, readErr := readParts(ctx, r, first, free, func(num int, data []byte) bool {
		select {
		case work <- part{num, data}:
			return true
		case <-finished:
			return false
		}
	})
	if readErr != nil {
		cancel(readErr) // no need to finish the part in flight
	}
	close(work)
	<-finished
	switch {
	case readErr != nil:
		return Object{}, readErr
	case sendErr != nil:
		return Object{}, sendErr
	case ctx.Err() != nil:
		return Object{}, fmt.Errorf("s3: upload: %w", context.Cause(ctx))
	}
	return c.complete(ctx, key, id, done, size)
}

// readParts reads r part by part into the buffers of free, the first part
// being first, and hands each to send (false: stop). It returns the
// number of bytes read.
func readParts(ctx context.Context, r io.Reader, first []byte, free chan []byte, send func(int, []byte) bool) (int64, error) {
	size := int64(len(first))
	if !send(1, first) {
		return size, nil
	}
	for num := 2; ; num++ {
		var buf []byte
		select {
		case buf = <-free:
		case <-ctx.Done():
			return size, nil
		}
		n, err := io.ReadFull(r, buf)
		switch {
		case err == io.EOF:
			return size, nil
		case err != nil && err != io.ErrUnexpectedEOF:
			return size, fmt.Errorf("s3: upload: read: %w", err)
		case num > maxParts:
			return size, fmt.Errorf("s3: upload: more than %d parts of %d bytes", maxParts, len(buf))
		}
		size += int64(n)
		if !send(num, buf[:n]) || err == io.ErrUnexpectedEOF {
			return size, nil
		}
	}
}

// completedPart is one <Part> of CompleteMultipartUpload.
type completedPart struct {
	Number int    `xml:"PartNumber"`
	ETag   string `xml:"ETag"`
}

func (c *Client) createUpload(ctx context.Context, key, contentType string) (string, error) {
	r := &request{op: "upload", method: http.MethodPost, key: key, query: url.Values{"uploads": {""}}, retry: retryAnswered}
	if contentType != "" {
		r.header = http.Header{"Content-Type": {contentType}}
	}
	var x struct {
		XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
		UploadID string   `xml:"UploadId"`
	}
	err := c.do(ctx, r, func(resp *http.Response) error {
		if err := decodeXML(resp.Body, &x); err != nil {
			return err
		}
		if x.UploadID == "" {
			return fmt.Errorf("%w: no UploadId", errMalformed)
		}
		return nil
	})
	return x.UploadID, err
}

func (c *Client) uploadPart(ctx context.Context, key, id string, num int, data []byte) (string, error) {
	q := url.Values{"partNumber": {strconv.Itoa(num)}, "uploadId": {id}}
	var etag string
	err := c.do(ctx, &request{op: "upload part " + strconv.Itoa(num), method: http.MethodPut, key: key, query: q,
		body: data, retry: retryIdempotent}, func(resp *http.Response) error {
		etag = resp.Header.Get("ETag")
		if etag == "" {
			return fmt.Errorf("%w: no ETag for a part", errMalformed)
		}
		return discard(resp)
	})
	return etag, err
}

// complete sends CompleteMultipartUpload. S3 may answer it 200 with an
// <Error> body (the work is done after the headers are sent): that is an
// *Error with Status 200, retried when its code says so. When an answer
// was lost and the retry finds the upload gone (NoSuchUpload), the first
// try did complete it if the key now holds an object of the size sent.
func (c *Client) complete(ctx context.Context, key, id string, parts []completedPart, size int64) (Object, error) {
	body, err := xml.Marshal(struct {
		XMLName xml.Name        `xml:"CompleteMultipartUpload"`
		Parts   []completedPart `xml:"Part"`
	}{Parts: parts})
	if err != nil {
		return Object{}, fmt.Errorf("s3: upload: %w", err)
	}
	obj := Object{Key: key, Size: size}
	err = c.do(ctx, &request{op: "upload", method: http.MethodPost, key: key, query: url.Values{"uploadId": {id}},
		body: body, retry: retryComplete}, func(resp *http.Response) error {
		var x struct {
			XMLName xml.Name
			ETag    string `xml:"ETag"`
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxXMLAnswer))
		if err != nil {
			return err
		}
		if err := xml.Unmarshal(data, &x); err != nil {
			return fmt.Errorf("%w: %v", errMalformed, err)
		}
		if x.XMLName.Local == "Error" {
			e := decodeError(data)
			e.Op, e.Status, e.Message = "upload", resp.StatusCode, c.redact(e.Message)
			return e
		}
		obj.ETag = unquote(x.ETag)
		obj.LastModified, _ = http.ParseTime(resp.Header.Get("Date"))
		return nil
	})
	var se *Error
	if errors.As(err, &se) && se.Code == "NoSuchUpload" {
		if got, herr := c.Head(ctx, key); herr == nil && got.Size == size {
			return got, nil
		}
	}
	return obj, err
}

// abort sends AbortMultipartUpload on a context of its own.
func (c *Client) abort(ctx context.Context, key, id string) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	return c.do(actx, &request{op: "abort upload", method: http.MethodDelete, key: key,
		query: url.Values{"uploadId": {id}}, retry: retryIdempotent, okStatus: []int{http.StatusNotFound}}, discard)
}
