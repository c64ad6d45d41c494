package snapshot

import (
	"strings"
	"testing"
	"unsafe"
)

// TestCatchDataFault: catchDataFault lets panics other than a fault
// within its data go on (a nil dereference, a plain panic, a fault's
// address outside the data), and restores the goroutine's panic-on-fault
// setting.
func TestCatchDataFault(t *testing.T) {
	data := make([]byte, 64)
	for name, f := range map[string]func(){
		"nil":   func() { var p *[4]byte; _ = p[1] },
		"plain": func() { panic("boom") },
		"fault elsewhere": func() {
			panic(addrErr(1))
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil {
					t.Fatal("the panic was taken for a fault in the data")
				}
			}()
			var err error
			func() {
				defer catchDataFault(data, &err)()
				f()
			}()
			t.Fatalf("returned with %v", err)
		})
	}
	var err error
	func() {
		defer catchDataFault(data, &err)()
		panic(addrErr(unsafePointer(data) + 10))
	}()
	if err == nil || !strings.Contains(err.Error(), "changed while it was read") {
		t.Fatalf("a fault in the data gave %v", err)
	}
}

// addrErr is a panic value with a fault address, as the runtime's.
type addrErr uintptr

func (a addrErr) Error() string { return "fault" }
func (a addrErr) Addr() uintptr { return uintptr(a) }

func unsafePointer(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
