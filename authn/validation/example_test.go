package validation_test

import (
	"fmt"

	"strongbox/authn/validation"
)

func ExampleErrors() {
	errs := validation.Errors{"name": validation.Required()}
	errs.Sub("oauth2")["enabled"] = validation.New(validation.CodeSuperusersOAuth2, "OAuth2 is not supported for the _superusers collection.")
	fmt.Println(errs)
	// Output: name: Cannot be blank.; oauth2.enabled: OAuth2 is not supported for the _superusers collection.
}
