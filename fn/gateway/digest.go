package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// A lineDigest is a short, stable digest of a list of lines, written as a
// stream, so that status can remember a list it does not hold.
type lineDigest struct {
	h hash.Hash
	n int
}

func newLineDigest() *lineDigest { return &lineDigest{h: sha256.New()} }

func (d *lineDigest) add(line string) {
	d.n++
	d.h.Write([]byte(line))
	d.h.Write([]byte{'\n'})
}

// sum is the first 16 hex digits of the digest; "" for no lines.
func (d *lineDigest) sum() string {
	if d.n == 0 {
		return ""
	}
	return hex.EncodeToString(d.h.Sum(nil)[:8])
}
