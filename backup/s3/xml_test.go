package s3

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var listPageSeeds = []string{
	`<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
<Contents><Key>a.zip</Key><LastModified>2026-11-27T10:00:00.000Z</LastModified><ETag>&quot;5d41402abc4b2a76b9719d911017c592&quot;</ETag><Size>5</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>b c.zip</Key><LastModified>2026-11-27T10:00:01Z</LastModified><ETag>"e2fc-2"</ETag><Size>12582912</Size></Contents></ListBucketResult>`,
	`<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>`,
	`<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>`,
	`<ListBucketResult><Contents><Key>a</Key><Size>-1</Size><LastModified>2026-11-27T10:00:00Z</LastModified></Contents></ListBucketResult>`,
	`<Error><Code>NoSuchBucket</Code></Error>`,
	`<ListBucketResult><Contents><Key>a</Key><Size>1</Size><LastModified>yesterday</LastModified></Contents>`,
}

func TestDecodeListPage(t *testing.T) {
	tests := []struct {
		in      string
		want    []Object
		next    string
		wantErr bool
	}{
		{in: listPageSeeds[0], next: "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=", want: []Object{
			{Key: "a.zip", Size: 5, LastModified: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), ETag: "5d41402abc4b2a76b9719d911017c592"},
			{Key: "b c.zip", Size: 12582912, LastModified: time.Date(2026, 11, 27, 10, 0, 1, 0, time.UTC), ETag: "e2fc-2"},
		}},
		{in: listPageSeeds[1]},
		{in: listPageSeeds[2], wantErr: true}, // truncated without a token
		{in: listPageSeeds[3], wantErr: true}, // negative size
		{in: listPageSeeds[4], wantErr: true}, // not a list
		{in: listPageSeeds[5], wantErr: true}, // bad date, unclosed
		{in: "<ListBucketResult>" + strings.Repeat(" ", maxXMLAnswer) + "</ListBucketResult>", wantErr: true},
	}
	for i, tt := range tests {
		got, next, err := decodeListPage(strings.NewReader(tt.in))
		if (err != nil) != tt.wantErr {
			t.Errorf("%d: err = %v, want error %v", i, err, tt.wantErr)
			continue
		}
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Errorf("%d: err = %v, not errMalformed", i, err)
			}
			continue
		}
		if next != tt.next {
			t.Errorf("%d: next = %q, want %q", i, next, tt.next)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%d: objects (-want +got):\n%s", i, diff)
		}
	}
}

var errorSeeds = []string{
	`<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>AccessDenied</Code><Message>Access Denied</Message><RequestId>656c76696e6727732072657175657374</RequestId><HostId>Uuag1LuByRx9e6j5Onimru9pO4ZVKnJ2Qz7/C1NPcfTWAtRPfTaOFg==</HostId></Error>`,
	`<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>nope</BucketName><RequestId>R2</RequestId></Error>`,
	`<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message><AWSAccessKeyId>AK</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256</StringToSign><RequestId>R3</RequestId></Error>`,
	`<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>a.zip</Key></Error>`,
	`not xml at all`,
	``,
}

func TestErrorAnswers(t *testing.T) {
	c := &Client{creds: credentials{secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}}
	tests := []struct {
		body     string
		status   int
		want     Error
		text     string
		notFound bool
	}{
		{errorSeeds[0], 403, Error{Status: 403, Code: "AccessDenied", Message: "Access Denied", RequestID: "656c76696e6727732072657175657374", Op: "list"},
			"s3: list: AccessDenied: Access Denied (HTTP 403, request id 656c76696e6727732072657175657374)", false},
		{errorSeeds[1], 404, Error{Status: 404, Code: "NoSuchBucket", Message: "The specified bucket does not exist", RequestID: "R2", Op: "list"},
			"s3: list: NoSuchBucket: The specified bucket does not exist (HTTP 404, request id R2)", false},
		{errorSeeds[2], 403, Error{Status: 403, Code: "SignatureDoesNotMatch", Message: "The request signature we calculated does not match the signature you provided. Check your key and signing method.", RequestID: "R3", Op: "list"},
			"s3: list: SignatureDoesNotMatch: The request signature we calculated does not match the signature you provided. Check your key and signing method. (HTTP 403, request id R3)", false},
		{errorSeeds[3], 404, Error{Status: 404, Code: "NoSuchKey", Message: "The specified key does not exist.", Op: "list"},
			"s3: list: NoSuchKey: The specified key does not exist. (HTTP 404)", true},
		{errorSeeds[4], 502, Error{Status: 502, Message: "Bad Gateway", Op: "list"}, "s3: list: Bad Gateway (HTTP 502)", false},
		{errorSeeds[5], 404, Error{Status: 404, Message: "Not Found", Op: "list"}, "s3: list: Not Found (HTTP 404)", true},
		{"<Error><Code>X</Code><Message>echo wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY</Message></Error>", 400,
			Error{Status: 400, Code: "X", Message: "echo [secret]", Op: "list"}, "s3: list: X: echo [secret] (HTTP 400)", false},
	}
	for i, tt := range tests {
		resp := fakeResponse(tt.status, tt.body)
		err := c.answerError("list", resp)
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("%d: %T is not *Error", i, err)
		}
		if diff := cmp.Diff(tt.want, *se); diff != "" {
			t.Errorf("%d: (-want +got):\n%s", i, diff)
		}
		if err.Error() != tt.text {
			t.Errorf("%d: Error() = %q, want %q", i, err.Error(), tt.text)
		}
		if errors.Is(err, ErrNotFound) != tt.notFound {
			t.Errorf("%d: errors.Is(ErrNotFound) = %v", i, !tt.notFound)
		}
	}
}

// FuzzDecodeXML checks that no answer makes the decoders panic, and that
// what they accept is well formed.
func FuzzDecodeXML(f *testing.F) {
	for _, s := range append(listPageSeeds, errorSeeds...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		objs, next, err := decodeListPage(strings.NewReader(in))
		if err == nil {
			for _, o := range objs {
				if o.Key == "" || o.Size < 0 {
					t.Fatalf("accepted %+v", o)
				}
			}
			_ = next
		} else if !errors.Is(err, errMalformed) {
			t.Fatalf("error %v is not errMalformed", err)
		}
		e := decodeError([]byte(in))
		if e == nil {
			t.Fatal("decodeError returned nil")
		}
	})
}
