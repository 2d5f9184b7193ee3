package pattern

import (
	"math"
	"strconv"
	"strings"
)

// exactFrom is 2^53: from there on IEEE doubles no longer tell consecutive integers apart (9007199254740993 reads
// as 9007199254740992), so exact values and anything-but numbers of that magnitude compare by their exact decimal
// value, as Amazon EventBridge's matcher compares numbers beyond its numeric range by their text.
const exactFrom = 1 << 53

// numKey is the identity of a number for exact matching: its double, and from exactFrom on its exact decimal value
// (decimalKey) too; below, exact is "".
type numKey struct {
	f     float64
	exact string
}

// keyOfNumber is the numKey of a JSON number given as its text and its double.
func keyOfNumber(text string, f float64) numKey {
	if math.Abs(f) < exactFrom {
		return numKey{f: f}
	}
	return numKey{f: f, exact: decimalKey(text)}
}

// decimalKey is the exact value of a JSON number as one canonical text: sign, significant digits without leading or
// trailing zeros, "e", exponent ("-9007199254740993e0", "1e2" for 100, 1E+2 and 100.0). Equal values give equal
// keys whatever their notation. It costs a pass over the text; an exponent that does not fit 9 digits (the number
// cannot be a finite double of that magnitude then) leaves the text as it is.
func decimalKey(text string) string {
	neg := strings.HasPrefix(text, "-")
	mant, exp := strings.TrimPrefix(text, "-"), 0
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		e := strings.TrimPrefix(mant[i+1:], "+")
		if len(strings.TrimPrefix(e, "-")) > 9 {
			return text
		}
		n, err := strconv.Atoi(e)
		if err != nil {
			return text
		}
		mant, exp = mant[:i], n
	}
	digits := mant
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		digits = mant[:i] + mant[i+1:]
		exp -= len(mant) - i - 1
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0"
	}
	n := len(digits)
	digits = strings.TrimRight(digits, "0")
	exp += n - len(digits)
	if neg {
		digits = "-" + digits
	}
	return digits + "e" + strconv.Itoa(exp)
}

// numberKey is the numKey of a number leaf of the event.
func (l *leaf) numberKey() numKey {
	return keyOfNumber(string(l.str), l.num)
}
