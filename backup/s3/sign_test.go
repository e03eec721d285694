package s3

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The request, canonical request, string to sign and Authorization of AWS's
// published Signature Version 4 test suite (credentials AKIDEXAMPLE, date
// 20150830T123600Z, region us-east-1, service "service"). Each case's
// canonical URI is given as the suite's request has it; the suite's
// signatures are facts, so any change to the signer that breaks one is a bug.
func TestSignVectors(t *testing.T) {
	creds := credentials{accessKey: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
		region: "us-east-1", service: "service"}
	when := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	const host = "example.amazonaws.com"
	const date = "20150830T123600Z"
	tests := []struct {
		name    string
		method  string
		path    string // decoded, as the request names it
		query   url.Values
		header  http.Header // besides Host and X-Amz-Date
		payload string      // hex SHA-256 of the body
		creq    string
		sts     string // its last line: the canonical request's hash
		sig     string
	}{
		{
			name: "get-vanilla", method: "GET", path: "/",
			creq: "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:  "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63",
			sig:  "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
		},
		{
			name: "get-vanilla-query-order-key-case", method: "GET", path: "/",
			query: url.Values{"Param2": {"value2"}, "Param1": {"value1"}},
			creq:  "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:   "816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0",
			sig:   "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500",
		},
		{
			name: "get-vanilla-query-order-key", method: "GET", path: "/",
			query: url.Values{"Param1": {"value2", "Value1"}},
			creq:  "GET\n/\nParam1=Value1&Param1=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:   "704b4cef673542d84cdff252633f065e8daeba5f168b77116f8b1bcaf3d38f89",
			sig:   "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1",
		},
		{
			name: "get-vanilla-query-unreserved", method: "GET", path: "/",
			query: url.Values{"-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz": {"-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"}},
			creq:  "GET\n/\n-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz=-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:   "c30d4703d9f799439be92736156d47ccfb2d879ddf56f5befa6d1d6aab979177",
			sig:   "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197",
		},
		{
			name: "get-vanilla-utf8-query", method: "GET", path: "/",
			query: url.Values{"ሴ": {"bar"}},
			creq:  "GET\n/\n%E1%88%B4=bar\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:   "eb30c5bed55734080471a834cc727ae56beb50e5f39d1bff6d0d38cb192a7073",
			sig:   "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04",
		},
		{
			name: "get-utf8", method: "GET", path: "/ሴ",
			creq: "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:  "2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102",
			sig:  "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85",
		},
		{
			name: "get-unreserved", method: "GET", path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
			creq: "GET\n/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:  "6a968768eefaa713e2a6b16b589a8ea192661f098f37349f4e2c0082757446f9",
			sig:  "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f",
		},
		{
			name: "get-header-key-duplicate", method: "GET", path: "/",
			header: http.Header{"My-Header1": {"value2", "value2", "value1"}},
			creq:   "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value2,value2,value1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n" + emptySHA256,
			sts:    "dc7f04a3abfde8d472b0ab1a418b741b7c67174dad1551b4117b15527fbe966c",
			sig:    "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
		},
		{
			name: "get-header-value-trim", method: "GET", path: "/",
			header: http.Header{"My-Header1": {" value1"}, "My-Header2": {` "a   b   c"`}},
			creq:   "GET\n/\n\nhost:example.amazonaws.com\nmy-header1:value1\nmy-header2:\"a b c\"\nx-amz-date:20150830T123600Z\n\nhost;my-header1;my-header2;x-amz-date\n" + emptySHA256,
			sts:    "a726db9b0df21c14f559d0a978e563112acb1b9e05476f0a6a1c7d68f28605c7",
			sig:    "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736",
		},
		{
			name: "post-header-value-case", method: "POST", path: "/",
			header: http.Header{"My-Header1": {"VALUE1"}},
			creq:   "POST\n/\n\nhost:example.amazonaws.com\nmy-header1:VALUE1\nx-amz-date:20150830T123600Z\n\nhost;my-header1;x-amz-date\n" + emptySHA256,
			sts:    "d51ced243e649e3de6ef63afbbdcbca03131a21a7103a1583706a64618606a93",
			sig:    "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d",
		},
		{
			name: "post-vanilla-query", method: "POST", path: "/",
			query: url.Values{"Param1": {"value1"}},
			creq:  "POST\n/\nParam1=value1\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + emptySHA256,
			sts:   "9d659678c1756bb3113e2ce898845a0a79dbbc57b740555917687f1b3340fbbd",
			sig:   "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11",
		},
		{
			// The body "Param1=value1"; its Content-Type is signed.
			name: "post-x-www-form-urlencoded", method: "POST", path: "/",
			header:  http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
			payload: "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
			creq:    "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
			sts:     "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281",
			sig:     "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
		},
		{
			name: "post-x-www-form-urlencoded-parameters", method: "POST", path: "/",
			header:  http.Header{"Content-Type": {"application/x-www-form-urlencoded; charset=utf8"}},
			payload: "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
			creq:    "POST\n/\n\ncontent-type:application/x-www-form-urlencoded; charset=utf8\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e",
			sts:     "2e1cf7ed91881a30569e46552437e4156c823447bf1781b921b5d486c568dd1c",
			sig:     "1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Host": {host}, "X-Amz-Date": {date}}
			for k, vs := range tt.header {
				h[k] = vs
			}
			payload := tt.payload
			if payload == "" {
				payload = emptySHA256
			}
			got := creds.sign(tt.method, encodePath(tt.path), tt.query, h, payload, when)
			if got.canonicalRequest != tt.creq {
				t.Errorf("canonical request:\n%s\nwant:\n%s", got.canonicalRequest, tt.creq)
			}
			wantSTS := "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
			if tt.sts != "" && got.stringToSign != wantSTS+tt.sts {
				t.Errorf("string to sign:\n%s\nwant:\n%s", got.stringToSign, wantSTS+tt.sts)
			}
			names := strings.Split(tt.creq, "\n")[strings.Count(tt.creq, "\n")-1]
			want := "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=" +
				names + ", Signature=" + tt.sig
			if got.authorization != want {
				t.Errorf("authorization:\n%s\nwant:\n%s", got.authorization, want)
			}
		})
	}
}

// The S3 example of AWS's documentation: GET /test.txt with Range from
// examplebucket, signed with the documentation's example key pair.
func TestSignS3GetObjectExample(t *testing.T) {
	creds := credentials{accessKey: "AKIAIOSFODNN7EXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		region: "us-east-1", service: "s3"}
	h := http.Header{
		"Host":                 {"examplebucket.s3.amazonaws.com"},
		"Range":                {"bytes=0-9"},
		"X-Amz-Content-Sha256": {emptySHA256},
		"X-Amz-Date":           {"20130524T000000Z"},
	}
	got := creds.sign("GET", encodePath("/test.txt"), nil, h, emptySHA256, time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC))
	wantCreq := "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\nx-amz-content-sha256:" + emptySHA256 +
		"\nx-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n" + emptySHA256
	if got.canonicalRequest != wantCreq {
		t.Errorf("canonical request:\n%s\nwant:\n%s", got.canonicalRequest, wantCreq)
	}
	wantSTS := "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972"
	if got.stringToSign != wantSTS {
		t.Errorf("string to sign:\n%s\nwant:\n%s", got.stringToSign, wantSTS)
	}
	want := "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, " +
		"SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, " +
		"Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
	if got.authorization != want {
		t.Errorf("authorization:\n%s\nwant:\n%s", got.authorization, want)
	}
}

// S3 keys are encoded byte by byte, "/" kept in paths and encoded in
// query values, and never normalized.
func TestEncodeKeys(t *testing.T) {
	tests := []struct{ in, path, query string }{
		{"a/b c+d.txt", "a/b%20c%2Bd.txt", "a%2Fb%20c%2Bd.txt"},
		{"@auto_pb_backup_20261127.zip", "%40auto_pb_backup_20261127.zip", "%40auto_pb_backup_20261127.zip"},
		{"é", "%C3%A9", "%C3%A9"},
		{"a~b-c_d.e", "a~b-c_d.e", "a~b-c_d.e"},
		{"a//b/../c", "a//b/../c", "a%2F%2Fb%2F..%2Fc"},
		{"100%=&?#", "100%25%3D%26%3F%23", "100%25%3D%26%3F%23"},
		{"*!'()", "%2A%21%27%28%29", "%2A%21%27%28%29"},
	}
	for _, tt := range tests {
		if got := encodePath(tt.in); got != tt.path {
			t.Errorf("encodePath(%q) = %q, want %q", tt.in, got, tt.path)
		}
		if got := uriEncode(tt.in, true); got != tt.query {
			t.Errorf("uriEncode(%q, true) = %q, want %q", tt.in, got, tt.query)
		}
	}
}
