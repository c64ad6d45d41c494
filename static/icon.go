package static

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
)

// The icon: four memory bars on a dark tile, the last one overflowing the
// card's capacity line in red. web/icon.svg draws the same picture; the PNGs
// are drawn here so that no binary file lives in the repository.
var (
	iconBG    = color.RGBA{0x0f, 0x17, 0x2a, 0xff}
	iconBar   = color.RGBA{0x38, 0xbd, 0xf8, 0xff}
	iconOver  = color.RGBA{0xef, 0x44, 0x44, 0xff}
	iconLimit = color.RGBA{0xf8, 0xfa, 0xfc, 0xff}
)

// writeIcons draws icon-192.png, icon-512.png and the maskable 512 icon
// (full-bleed background, picture inside the 80 % safe zone) into dir.
func writeIcons(dir string) error {
	for _, ic := range []struct {
		name     string
		size     int
		maskable bool
	}{{"icon-192.png", 192, false}, {"icon-512.png", 512, false}, {"icon-maskable-512.png", 512, true}} {
		f, err := os.Create(filepath.Join(dir, ic.name))
		if err != nil {
			return err
		}
		err = png.Encode(f, drawIcon(ic.size, ic.maskable))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// drawIcon renders the icon at size×size pixels. Coordinates are in a 64-unit
// design grid, the same as web/icon.svg's viewBox.
func drawIcon(size int, maskable bool) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	s := float64(size) / 64
	inset := 0.0
	if maskable {
		inset = 6.4 // keep the picture within the central 80 %
	}
	// scale maps a design coordinate into the (possibly inset) picture.
	scale := func(v float64) float64 { return (inset + v*(64-2*inset)/64) * s }
	fill := func(x0, y0, x1, y1 float64, c color.RGBA, radius float64) {
		X0, Y0, X1, Y1, R := scale(x0), scale(y0), scale(x1), scale(y1), radius*s
		for y := int(Y0); y < int(Y1+0.5) && y < size; y++ {
			for x := int(X0); x < int(X1+0.5) && x < size; x++ {
				px, py := float64(x)+0.5, float64(y)+0.5
				// Distance outside the rounded corner, if in a corner.
				cx := min(max(px, X0+R), X1-R)
				cy := min(max(py, Y0+R), Y1-R)
				if dx, dy := px-cx, py-cy; dx*dx+dy*dy > R*R {
					continue
				}
				img.SetRGBA(x, y, c)
			}
		}
	}
	if maskable {
		for y := 0; y < size; y++ {
			for x := 0; x < size; x++ {
				img.SetRGBA(x, y, iconBG)
			}
		}
	} else {
		fill(0, 0, 64, 64, iconBG, 12)
	}
	fill(10, 38, 19, 54, iconBar, 1.5)
	fill(22, 30, 31, 54, iconBar, 1.5)
	fill(34, 22, 43, 54, iconBar, 1.5)
	fill(46, 10, 55, 54, iconOver, 1.5)
	fill(7, 19, 58, 21.5, iconLimit, 0)
	return img
}
