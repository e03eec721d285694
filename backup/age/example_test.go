package age_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"strings"

	"strongbox/backup/age"
)

func Example() {
	id, err := age.GenerateX25519Identity(rand.Reader)
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	w, _ := age.Encrypt(&file, id.Recipient())
	io.WriteString(w, "hello, age")
	w.Close()
	fmt.Println(age.IsEncrypted(file.Bytes()), strings.HasPrefix(id.Recipient().String(), "age1"))

	r, err := age.Decrypt(&file, id)
	if err != nil {
		panic(err)
	}
	plain, _ := io.ReadAll(r)
	fmt.Println(string(plain))
	// Output:
	// true true
	// hello, age
}
