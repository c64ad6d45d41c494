package analysis

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"oomscope/bytesize"
)

// Text is a sentence of the diagnosis whose byte amounts stay exact
// numbers, so that it can be shown in GiB or GB: the amounts are marked
// (sz) when the sentence is written and formatted when it is shown.
// String and JSON give it in GiB, as PyTorch prints; Format in any unit.
type Text string

// RawTextJSON makes Text marshal with its amounts still marked, for a
// page that formats them in the unit it shows (the snapshot worker sets
// it; the CLI's JSON keeps readable GiB).
var RawTextJSON bool

// Markers around an amount: sizeMark n sizeMark, with + after the first
// for a signed amount.
const sizeMark = "\x00"

// sz marks n bytes in a sentence.
func sz(n int64) string { return sizeMark + strconv.FormatInt(n, 10) + sizeMark }

// szSigned marks n bytes shown with its sign (+1.00 MiB).
func szSigned(n int64) string { return sizeMark + "+" + strconv.FormatInt(n, 10) + sizeMark }

// textf writes a Text; byte amounts go in through sz.
func textf(format string, a ...any) Text { return Text(fmt.Sprintf(format, a...)) }

// Format renders the sentence with its amounts in unit u.
func (t Text) Format(u bytesize.Unit) string {
	s := string(t)
	if !strings.Contains(s, sizeMark) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, sizeMark)
		if i < 0 {
			break
		}
		j := strings.Index(s[i+1:], sizeMark)
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		num, signed := s[i+1:i+1+j], false
		if strings.HasPrefix(num, "+") {
			num, signed = num[1:], true
		}
		n, err := strconv.ParseInt(num, 10, 64)
		switch {
		case err != nil:
			b.WriteString(num)
		case signed:
			b.WriteString(bytesize.Signed(n, u))
		default:
			b.WriteString(bytesize.Format(n, u))
		}
		s = s[i+j+2:]
	}
	b.WriteString(s)
	return b.String()
}

// String renders the sentence in GiB.
func (t Text) String() string { return t.Format(bytesize.Binary) }

// MarshalJSON writes the sentence in GiB, or with its amounts marked when
// RawTextJSON is set.
func (t Text) MarshalJSON() ([]byte, error) {
	if RawTextJSON {
		return json.Marshal(string(t))
	}
	return json.Marshal(t.String())
}
