package mount

import (
	"path/filepath"

	"github.com/cryptvol/cryptvol/volume"
)

// DaemonSecret is what `cryptvol mount` hands its daemon on the secret
// pipe (StartDaemon): the resolved credentials (the parent may have
// prompted for them), never on the command line, and the open options
// that go with them.
type DaemonSecret struct {
	// Unlocked says the daemon opens the volume from its kept unlock
	// (cryptvol unlock) and Creds is empty.
	Unlocked bool                `json:"unlocked,omitempty"`
	Creds    volume.Credentials  `json:"creds"`
	Protect  *volume.Credentials `json:"protect,omitempty"`
	Open     OpenOptions         `json:"open"`
}

// OpenOptions are the serialisable part of volume.Options.
type OpenOptions struct {
	Type, Hash, Encryption, Header string
	Hidden, System, ReadOnly       bool
}

// NewDaemonSecret carries c and o (its hidden-volume protection
// included) to the daemon. Keyfile paths become absolute in place: the
// daemon runs in another directory.
func NewDaemonSecret(c volume.Credentials, o volume.Options) DaemonSecret {
	s := DaemonSecret{Creds: c, Protect: o.ProtectHidden, Open: OpenOptions{Type: o.Type, Hash: o.Hash,
		Encryption: o.Encryption, Header: o.Header, Hidden: o.Hidden, System: o.System, ReadOnly: o.ReadOnly}}
	ks := [][]string{s.Creds.Keyfiles}
	if s.Protect != nil {
		ks = append(ks, s.Protect.Keyfiles)
	}
	for _, k := range ks {
		for i, f := range k {
			if abs, err := filepath.Abs(f); err == nil {
				k[i] = abs
			}
		}
	}
	return s
}

// Options are the volume.Options the daemon opens the volume with.
func (s DaemonSecret) Options() volume.Options {
	oo := s.Open
	return volume.Options{Type: oo.Type, Hash: oo.Hash, Encryption: oo.Encryption, Header: oo.Header,
		Hidden: oo.Hidden, System: oo.System, ReadOnly: oo.ReadOnly, ProtectHidden: s.Protect}
}
