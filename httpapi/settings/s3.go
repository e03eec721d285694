package settings

import "strongbox/authn/validation"

// S3 configures an S3-compatible bucket: the s3 section (file storage)
// and backups.s3 (the storage of backups).
type S3 struct {
	Enabled        bool   `json:"enabled"`
	Bucket         string `json:"bucket"`
	Region         string `json:"region"`
	Endpoint       string `json:"endpoint"`
	AccessKey      string `json:"accessKey"`
	Secret         string `json:"secret,omitempty"`
	ForcePathStyle bool   `json:"forcePathStyle"`
}

// public returns the bucket without its secret.
func (s S3) public() S3 {
	s.Secret = ""
	return s
}

// keepSecret keeps the stored secret when an update leaves it empty.
func (s *S3) keepSecret(cur S3) {
	if s.Secret == "" {
		s.Secret = cur.Secret
	}
}

// What enabling S3 file storage answers, in place of a bucket strongbox
// would not use.
const msgS3FilesUnsupported = "S3 file storage is not supported: this server stores no uploaded files."

// validate checks an enabled bucket as PocketBase v0.31.0 does (its
// S3Config.Validate): bucket, region, endpoint, accessKey and secret
// required (validation_required), the endpoint a URL (validation_is_url;
// strongbox wants http or https with a host, since it signs requests to
// it). A disabled bucket is not checked. If unsupported is not empty, a
// bucket that passes is still refused with it (validation_unsupported)
// on enabled: the file storage's, since strongbox stores no files, and
// accepting it would suggest files go where none ever will. The backups'
// bucket (unsupported empty) is where archives go when enabled.
func (s S3) validate(unsupported string) validation.Errors {
	if !s.Enabled {
		return nil
	}
	errs := validation.Errors{}
	for field, val := range map[string]string{"bucket": s.Bucket, "region": s.Region, "endpoint": s.Endpoint, "accessKey": s.AccessKey, "secret": s.Secret} {
		if val == "" {
			errs[field] = errRequired
		}
	}
	if _, err := validation.HTTPURL(s.Endpoint); s.Endpoint != "" && err != nil {
		errs["endpoint"] = errURL
	}
	if len(errs) == 0 && unsupported != "" {
		errs["enabled"] = validation.New(validation.CodeUnsupported, unsupported)
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
