package kdf_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/kdf/argon2"
)

// A volume driver tries each VeraCrypt derivation in turn (or all at once
// on goroutines, cancelling the rest when one opens the header).
func ExampleDerive() {
	password := []byte("aaaaaaaaaaaa")
	salt := make([]byte, 64) // the first 64 bytes of the header
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, prf := range kdf.VeraCryptPRFs(false) {
		p, err := kdf.VeraCryptParams(prf, 0, false)
		if err != nil {
			panic(err)
		}
		key, err := kdf.Derive(ctx, p, password, salt, 192)
		if errors.Is(err, argon2.ErrInsufficientMemory) {
			fmt.Println("skipping", p, "-", err)
			continue
		}
		if err != nil {
			panic(err)
		}
		_ = key // try to decrypt the header with key
	}
}
