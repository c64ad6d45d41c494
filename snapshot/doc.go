// Package snapshot decodes the CUDA memory snapshots that PyTorch writes with
// torch.cuda.memory._dump_snapshot() (a pickled dict) into typed Go values,
// and writes them back (Encode).
//
// # The model
//
// A Snapshot holds the segments (with their blocks), one Trace per device,
// the allocator settings, the record_function annotations, and two
// tables: Frames (every distinct frame once; FrameID indexes it) and
// Stacks (every distinct frame list once; StackID indexes it). Segments,
// blocks and trace entries refer to stacks by StackID, so the sharing that
// makes pickled snapshots small survives decoding. The format differs
// across torch versions (see the field comments): every key except
// action/size (trace entries), address/total_size/blocks (segments) and
// size/state (blocks) is optional; missing integers read as 0 and strings
// as "".
//
// A Trace stores its entries by column (action, address, size, stream,
// time, stack: 19 bytes an entry, address, size and time as 32-bit values
// in a page where they fit, 31 where not, the rare keys aside) in pages
// that never need reallocating whole; read it with its accessors (Kind, Addr, Size,
// TimeUS, Frames, …) or assemble one entry with Entry. The decoder writes
// the entries of a whole file into one column store in file order, and
// each device's Trace is a run of it.
//
// Stacks can be lazy: decoding from a re-readable Source with a Summarizer
// (package analysis has one), once the stacks held pass a number of frame
// IDs, a new distinct stack keeps only its summary (what the analysis
// reads: its allocation site and program phase) and the byte range of its
// frame list, and Stacks.Frames reads it again from the Source when it is
// shown. Memory then does not grow with the number of distinct stacks.
// A Summarizer given as a StackFold (Options.Fold; analysis.Fold) is
// applied, and the stack hashed, as each frame list is read, in the same
// loop: a new stack then costs no pass of its own.
//
// # Decoding
//
// Decode (a reader, streamed through a 4 MiB window) and DecodeBytes (in
// memory) run a purpose-built pickle machine for protocols 0-5: the common
// opcodes of snapshots run in a fast loop, each opcode has a method for the
// general case (ops.go), dicts are typed by their keys as they are filled
// (a trace entry goes straight into the columns), frame lists become
// interned stacks as they are read, and containers used up are recycled so
// that the memo keeps only small values for what may be referenced again
// (its pages of recycled trace entries packed as runs of rows).
// It refuses every opcode that imports or calls code (GLOBAL, REDUCE,
// BUILD, NEWOBJ, INST, OBJ, PERSID, EXT*) and out-of-band buffers, accepts
// gzip input, and fails with a *DecodeError wrapping one of ErrEmpty,
// ErrNotPickle, ErrTruncated, ErrCorrupt, ErrUnsafe, ErrShape, ErrTooLarge
// or ErrCanceled, with the byte offset and the opcode.
//
// A file decoded with a Fold from a Source can be decoded by two decoders
// at once (Split, DecodePart): the second decodes a later stretch of the
// trace, the first takes it when it gets there if it verifies, and the
// snapshot is the same as decoding alone. Decode does so by itself on two
// cores for large files.
//
// Every path (file, gzip, stdin, bytes) charges what it builds, and what
// the analysis will build from it, against one memory budget (by default
// 100 MiB plus 3× the input's size; Options.MaxMemory): a list referenced
// many times through the memo is charged at each use. Strings and text
// lines are bounded (16 MiB), decimal integers too (4300 digits), and a
// snapshot may name at most 1024 devices.
//
// Integer conversion: values are decoded as arbitrary-length two's
// complement. Fields of type uint64 (addresses, stream pointers) take a
// negative value as its 64-bit two's complement; fields of type int64 take
// a value in [2^63, 2^64) (a C++ -1 written as unsigned, the 9-byte LONG1
// case) as its two's complement, so 2^64-1 reads as -1. Anything that needs
// more than 64 bits is an error.
//
// Frame and stack IDs are numbered in the order the decoder meets them;
// Equal compares two snapshots whatever their IDs.
package snapshot
