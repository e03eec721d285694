package s3_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"strongbox/backup/s3"
)

func ExampleNew() {
	for _, bucket := range []string{"strongbox-backups", "Strongbox_Backups"} {
		_, err := s3.New(s3.Config{Region: "eu-west-3", Bucket: bucket, AccessKey: "AK", Secret: "secret"})
		fmt.Println(err)
	}
	// Output:
	// <nil>
	// s3: bucket name "Strongbox_Backups" may hold only lowercase letters, digits, '.' and '-'
}

func ExampleClient_Head() {
	// A server that has no key at all.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	c, err := s3.New(s3.Config{Endpoint: srv.URL, Region: "us-east-1", Bucket: "backups",
		AccessKey: "AK", Secret: "secret", ForcePathStyle: true})
	if err != nil {
		panic(err)
	}
	_, err = c.Head(context.Background(), "nightly.zip")
	fmt.Println(errors.Is(err, s3.ErrNotFound))
	// Output: true
}

func ExampleError() {
	err := error(&s3.Error{Status: 403, Code: "AccessDenied", Message: "Access Denied", RequestID: "R1", Op: "list"})
	var se *s3.Error
	if errors.As(err, &se) {
		fmt.Println(se.Code)
	}
	fmt.Println(err)
	// Output:
	// AccessDenied
	// s3: list: AccessDenied: Access Denied (HTTP 403, request id R1)
}
