package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Error classes. Every decoding error wraps one of them (test with
// errors.Is) and says in words what was wrong.
var (
	// ErrEmpty: the input has no bytes.
	ErrEmpty = errors.New("the file is empty")
	// ErrNotPickle: the input is not a pickle at all (JSON, HTML, zip, text,
	// random bytes).
	ErrNotPickle = errors.New("not a pickle file")
	// ErrTruncated: the pickle ends before its STOP opcode.
	ErrTruncated = errors.New("the file is truncated")
	// ErrCorrupt: the pickle is malformed (bad opcode, bad length, stack
	// underflow, missing memo entry, invalid UTF-8 ...).
	ErrCorrupt = errors.New("the pickle is corrupt")
	// ErrUnsafe: the pickle uses an opcode that imports or calls Python
	// code (GLOBAL, REDUCE, BUILD, ...) or out-of-band buffers; a memory
	// snapshot never does.
	ErrUnsafe = errors.New("the pickle contains objects a memory snapshot never has")
	// ErrShape: the pickle decodes, but is not shaped like a memory
	// snapshot (wrong top level, wrong field types).
	ErrShape = errors.New("not a CUDA memory snapshot")
	// ErrTooLarge: decoding and analysing the file would take more memory
	// than the budget allows (Options.MaxMemory; by default 100 MiB plus 3×
	// the file's size), or one item is over a fixed bound (a string of more
	// than 16 MiB, an integer of more than 4300 digits, more than 1024
	// devices).
	ErrTooLarge = errors.New("the snapshot is too large to analyse")
	// ErrCanceled: the Progress callback returned false.
	ErrCanceled = errors.New("decoding canceled")
)

// DecodeError reports where decoding failed.
type DecodeError struct {
	// Offset is the byte offset in the (decompressed) input of the opcode
	// being decoded; -1 when the error is not tied to a position.
	Offset int64
	// Op is the opcode name ("" when not tied to an opcode).
	Op string
	// Msg says what was wrong.
	Msg string
	// Kind is the error class (ErrCorrupt, ErrUnsafe, ...).
	Kind error
}

// Error formats the error with its position.
func (e *DecodeError) Error() string {
	switch {
	case e.Offset >= 0 && e.Op != "":
		return fmt.Sprintf("%v: %s at byte %d (opcode %s)", e.Kind, e.Msg, e.Offset, e.Op)
	case e.Offset >= 0:
		return fmt.Sprintf("%v: %s at byte %d", e.Kind, e.Msg, e.Offset)
	}
	return fmt.Sprintf("%v: %s", e.Kind, e.Msg)
}

// Unwrap returns the error class.
func (e *DecodeError) Unwrap() error { return e.Kind }

// Sniff recognizes common wrong inputs from their first bytes (at most 512
// are looked at): a zip archive (torch.save checkpoint), JSON, HTML, text,
// other binary data. It returns nil when b could be a pickle, else an error
// wrapping ErrEmpty or ErrNotPickle that says what the bytes look like.
func Sniff(b []byte) error {
	if len(b) == 0 {
		return &DecodeError{Offset: -1, Msg: "nothing to decode", Kind: ErrEmpty}
	}
	head := b[:min(len(b), 512)]
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff\xef\xbb\xbf")
	notPickle := func(msg string) error {
		return &DecodeError{Offset: -1, Msg: msg, Kind: ErrNotPickle}
	}
	switch {
	case len(b) >= 4 && bytes.Equal(b[:4], []byte("PK\x03\x04")):
		return notPickle("this is a zip archive (a torch.save checkpoint?), not the snapshot.pickle written by torch.cuda.memory._dump_snapshot")
	case len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '['):
		return notPickle("this looks like JSON; load the snapshot.pickle written by torch.cuda.memory._dump_snapshot instead")
	case len(trimmed) > 0 && trimmed[0] == '<':
		return notPickle("this looks like HTML (a memory_viz trace_plot page?); load the snapshot.pickle itself")
	case b[0] == 0x80:
		return nil
	case b[0] == opMark || b[0] == opEmptyDict || b[0] == opEmptyList:
		// Protocol 0/1: a snapshot's top level is a dict or a list.
		return nil
	}
	if isText(head) {
		return notPickle(fmt.Sprintf("this is text starting %q, not a pickle; a snapshot.pickle starts with byte 0x80", string(head[:min(len(head), 40)])))
	}
	return notPickle(fmt.Sprintf("the first byte is 0x%02x; a snapshot.pickle starts with byte 0x80 (pickle PROTO)", b[0]))
}

// textHint adds to a decoding error of a file that passed Sniff (it starts
// like a protocol 0 pickle) but reads as plain text what it most likely is.
func textHint(err error, head []byte) error {
	var de *DecodeError
	if !errors.As(err, &de) || len(head) == 0 || head[0] == 0x80 || !isText(head[:min(len(head), 512)]) ||
		(de.Kind != ErrCorrupt && de.Kind != ErrTruncated) {
		return err
	}
	c := *de
	c.Msg += " (the file looks like text, not a pickle: a snapshot.pickle is binary and starts with byte 0x80)"
	return &c
}

// isText reports whether b looks like printable UTF-8 text.
func isText(b []byte) bool {
	if !utf8.Valid(b[:max(0, len(b)-3)]) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			return false
		}
	}
	return true
}
