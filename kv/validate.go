package kv

// MaxHistory is the most revisions a bucket keeps per key.
const MaxHistory = 64

// ValidateBucketName reports whether name is a valid bucket name: not
// empty, only a-z, A-Z, 0-9, '_' and '-'. It returns ErrInvalidBucketName
// otherwise.
func ValidateBucketName(name string) error { return kind.CheckName(name) }

// ValidateKey reports whether key is a valid key: not empty, only a-z,
// A-Z, 0-9 and "-/_=.", not starting or ending with '.', no "..". It
// returns ErrInvalidKey otherwise. It does not bound the length: a key
// whose subject, with the bucket's prefix and a reply inbox, would not fit
// the server's control line fails the call with conn.ErrSubjectTooLong,
// before anything is sent.
func ValidateKey(key string) error {
	if key == "" || key[0] == '.' || key[len(key)-1] == '.' {
		return ErrInvalidKey
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == '.' {
			if key[i-1] == '.' {
				return ErrInvalidKey
			}
			continue
		}
		if !isKeyByte(c) {
			return ErrInvalidKey
		}
	}
	return nil
}

// validateFilter checks a watch or list filter: a key whose '.'-separated
// tokens may also be "*" (any one token) or, as the last token, ">" (one
// or more tokens).
func validateFilter(f string) error {
	if f == "" || f[0] == '.' || f[len(f)-1] == '.' {
		return ErrInvalidKey
	}
	start := 0
	for i := 0; i <= len(f); i++ {
		if i < len(f) && f[i] != '.' {
			continue
		}
		tok := f[start:i]
		switch {
		case tok == "":
			return ErrInvalidKey
		case tok == "*":
		case tok == ">":
			if i != len(f) {
				return ErrInvalidKey
			}
		default:
			for j := 0; j < len(tok); j++ {
				if !isKeyByte(tok[j]) {
					return ErrInvalidKey
				}
			}
		}
		start = i + 1
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isKeyByte(c byte) bool {
	return isAlnum(c) || c == '-' || c == '/' || c == '_' || c == '='
}
