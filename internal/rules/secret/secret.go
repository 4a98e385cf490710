// Package secret holds the patterns of secret material that inline
// cloud-init data must not hold: the compile check (internal/rules,
// inlineSecrets) and the cluster's ValidatingAdmissionPolicies
// (internal/render) both read them.
package secret

// Pattern is one kind of secret material that inline cloud-init data
// must not hold.
type Pattern struct {
	// Pattern is an RE2 regular expression: Go's regexp and CEL's
	// matches() (the ValidatingAdmissionPolicies of internal/render) read the
	// same syntax, so the compile check and the cluster's hold the same
	// rule.
	Pattern string
	// What names the material in messages ("a password").
	What string
}

// Patterns find secret material in inline cloud-init data.
var Patterns = []Pattern{
	{`(?im)^\s*(chpasswd|plain_text_passwd|hashed_passwd|passwd|password)\s*:`, "a password"},
	{`\$(1|2[aby]?|5|6|y|gy|7)\$[^\s:]{8,}`, "a password hash"},
	{`-----BEGIN [A-Z ]*PRIVATE KEY-----`, "a private key"},
	{`(?im)^\s*[a-z0-9_-]*(token|secret|api_?key|access_?key)[a-z0-9_-]*\s*[:=]`, "a token or secret key"},
	{`\bAKIA[0-9A-Z]{16}\b`, "an AWS access key"},
	{`\bgh[pousr]_[A-Za-z0-9]{36,}\b`, "a GitHub token"},
}
