package mail_test

import (
	"fmt"

	"strongbox/authn/mail"
)

func ExampleRender() {
	vars := map[string]string{
		mail.VarAppName:               "Acme",
		mail.VarOTP:                   "12345678",
		mail.VarRecordPrefix + "name": "Tom & Jerry",
	}
	fmt.Println(mail.Render("OTP for {APP_NAME}", vars, false))
	fmt.Println(mail.Render("<p>Hello {RECORD:name}, your code is <strong>{OTP}</strong>.</p>", vars, true))
	// Output:
	// OTP for Acme
	// <p>Hello Tom &amp; Jerry, your code is <strong>12345678</strong>.</p>
}
