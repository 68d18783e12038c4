package volume

import (
	"bytes"
	"reflect"
	"testing"
)

// FuzzSnapshotUnmarshal feeds UnmarshalBinary arbitrary bytes (an agent's
// or keyring's reply): it never panics, and what it accepts encodes back
// to a snapshot that decodes to the same value.
func FuzzSnapshotUnmarshal(f *testing.F) {
	s := Snapshot{
		Driver: "bitlk", Mode: ModeState{Spec: "0x8004", SectorSize: 512, Key: bytes.Repeat([]byte{7}, 32)},
		DataSize: 1 << 20, Info: Info{Format: "bitlk"}, MasterKey: []byte{1, 2},
		Segments: []Segment{{Size: 4096, DevOffset: 8192, FirstSector: 16, Name: "first"}, {Offset: 4096, Size: 1<<20 - 4096, Zero: true}},
	}
	b, _ := s.MarshalBinary()
	f.Add(b)
	s.Segments = nil
	b, _ = s.MarshalBinary()
	v1 := append(append([]byte(nil), snapshotMagicV1...), b[len(snapshotMagic):len(b)-1]...)
	var old Snapshot
	if err := old.UnmarshalBinary(v1); err != nil || old.Driver != "bitlk" {
		f.Fatalf("a version 1 snapshot (an older agent's): %v", err)
	}
	f.Add(v1)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Snapshot
		if s.UnmarshalBinary(b) != nil {
			return
		}
		again, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back Snapshot
		if err := back.UnmarshalBinary(again); err != nil {
			t.Fatalf("a decoded snapshot does not decode after encoding: %v", err)
		}
		if !reflect.DeepEqual(back.Segments, s.Segments) || back.Driver != s.Driver || !bytes.Equal(back.Mode.Key, s.Mode.Key) || back.Identity != s.Identity {
			t.Fatalf("round trip changed the snapshot:\n%+v\n%+v", s, back)
		}
	})
}
