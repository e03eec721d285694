module strongbox

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	golang.org/x/crypto v0.58.0
)
