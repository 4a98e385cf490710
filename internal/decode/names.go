package decode

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Kubernetes' name checks run for every name, label and annotation of every
// intent and use regular expressions; most names are valid, so a byte test
// that accepts exactly what the expressions accept answers first, and the
// library is asked only for the messages about invalid ones.

func isDNS1123Label(s string) []string {
	if validDNSLabel(s) {
		return nil
	}
	return validation.IsDNS1123Label(s)
}

func isDNS1123Subdomain(s string) []string {
	if validDNSSubdomain(s) {
		return nil
	}
	return validation.IsDNS1123Subdomain(s)
}

func isQualifiedName(s string) []string {
	if validQualifiedName(s) {
		return nil
	}
	return validation.IsQualifiedName(s)
}

func isValidLabelValue(s string) []string {
	if s == "" || len(s) <= validation.LabelValueMaxLength && validQualifiedPart(s) {
		return nil
	}
	return validation.IsValidLabelValue(s)
}

func lowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func alnum(c byte) bool { return lowerAlnum(c) || c >= 'A' && c <= 'Z' }

// validDNSPart: [a-z0-9]([-a-z0-9]*[a-z0-9])?
func validDNSPart(s string) bool {
	if s == "" || !lowerAlnum(s[0]) || !lowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !lowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

func validDNSLabel(s string) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && validDNSPart(s)
}

func validDNSSubdomain(s string) bool {
	if len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	for part := range strings.SplitSeq(s, ".") {
		if !validDNSPart(part) {
			return false
		}
	}
	return true
}

// validQualifiedPart: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
func validQualifiedPart(s string) bool {
	if s == "" || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func validQualifiedName(s string) bool {
	prefix, name, hasPrefix := strings.Cut(s, "/")
	if !hasPrefix {
		name = prefix
	} else if strings.Contains(name, "/") || !validDNSSubdomain(prefix) {
		return false
	}
	return len(name) <= 63 && validQualifiedPart(name)
}
