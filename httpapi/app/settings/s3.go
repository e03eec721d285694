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

// What enabling S3 answers, in place of a bucket strongbox would not use.
const (
	msgS3FilesUnsupported   = "S3 file storage is not supported: this server stores no uploaded files."
	msgS3BackupsUnsupported = "S3 storage of backups is not supported: archives are kept in the data dir's backups folder."
)

// validate checks an enabled bucket: bucket, region, endpoint, accessKey
// and secret required, the endpoint a URL. A bucket that passes is still
// refused, with unsupported (validation_unsupported) on enabled: accepting
// it and going on with the local folder would put data where the operator
// does not look for it. A disabled bucket is not checked.
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
	if len(errs) == 0 {
		errs["enabled"] = validation.New(validation.CodeUnsupported, unsupported)
	}
	return errs
}
