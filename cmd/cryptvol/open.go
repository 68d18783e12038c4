package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
)

// openVolume opens path from its kept unlock (cryptvol unlock) when there
// is one and no credentials were given, else resolves the credentials from
// the flags (asking again, on a terminal, when the password was wrong) and
// unlocks path.
func openVolume(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, path string, readOnly bool) (*volume.Volume, error) {
	if v, err := openUnlocked(ctx, a, fs, cf, path, readOnly); v != nil || err != nil {
		return v, err
	}
	return withTries(a, cf, func() (*volume.Volume, error) {
		c, o, err := cf.resolve(a, fs, readOnly)
		if err != nil {
			return nil, err
		}
		defer c.Wipe()
		defer a.progressLine(&o)()
		return volume.OpenWith(ctx, path, c, o)
	})
}

// probeFilesystem fills in what lives in the data area, if recognisable.
func probeFilesystem(v *volume.Volume) *volume.Filesystem {
	r, err := fsprobe.Probe(v)
	if err != nil {
		return nil
	}
	fs := &volume.Filesystem{Type: r.Type, Version: r.Version, Label: r.Label, Serial: r.Serial, UUID: r.UUID}
	if fs.Label == "" {
		// NTFS keeps its label in a file ($Volume), not in the first sectors.
		if fsys, err := filesystem.OpenAs(r.Type, v, v.Size(), filesystem.Options{}); err == nil {
			fs.Label = fsys.Label()
			fsys.Close()
		}
	}
	return fs
}
