package archive_test

// An independent reader of the format, written from SPEC.md with the
// standard library and golang.org/x/crypto only (Argon2id from x/crypto,
// XChaCha20-Poly1305 through chacha20poly1305.NewX, HKDF from crypto/hkdf),
// none of the package's code. Archives the package writes must decode to
// exactly the members put in them: this checks that SPEC.md describes the
// bytes the package writes, and the package's own shortcuts (HChaCha20 done
// once per stream, precomputed HMAC states for HKDF-Expand) against the
// reference primitives.

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	xargon2 "golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/cryptvol/cryptvol/archive"
)

type specMember struct {
	dir   bool
	mode  uint32
	mtime int64
	data  []byte
}

// specDecode reads a whole archive file as SPEC.md says.
func specDecode(t *testing.T, file []byte, password, keyFile []byte) map[string]specMember {
	t.Helper()
	be := binary.BigEndian
	h := file[:160]
	if string(h[:16]) != "cryptvol-archive" || be.Uint16(h[16:]) != 1 {
		t.Fatal("spec: bad magic or version")
	}
	cipherID, source := h[18], h[19]
	salt := h[32:64]
	var kek []byte
	switch source {
	case 1:
		kek = xargon2.IDKey(password, salt, be.Uint32(h[24:]), be.Uint32(h[20:]), uint8(be.Uint32(h[28:])), 32)
	case 2:
		var err error
		if kek, err = hkdf.Key(sha256.New, keyFile, salt, "cryptvol-archive key file", 32); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("spec: key source %d", source)
	}
	var wrap cipher.AEAD
	var zero []byte
	switch cipherID {
	case 1:
		b, _ := aes.NewCipher(kek)
		wrap, _ = cipher.NewGCM(b)
		zero = make([]byte, 12)
	case 2:
		wrap, _ = chacha20poly1305.NewX(kek)
		zero = make([]byte, 24)
	default:
		t.Fatalf("spec: cipher %d", cipherID)
	}
	K, err := wrap.Open(nil, zero, h[64:112], h[:64])
	if err != nil {
		t.Fatal("spec: the wrap does not open")
	}
	sub := func(purpose string) []byte {
		k, err := hkdf.Key(sha256.New, K, nil, "cryptvol-archive "+purpose, 32)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	kHeader, kRecord, kIndex, kFooter := sub("header"), sub("record"), sub("index"), sub("footer")
	fileID := h[112:128]
	m := hmac.New(sha256.New, kHeader)
	m.Write(h[:128])
	if !hmac.Equal(m.Sum(nil), h[128:160]) {
		t.Fatal("spec: header MAC")
	}

	// stream decrypts the stream of plaintext length L at offset O.
	stream := func(P []byte, R []byte, O, L int64) []byte {
		n := max(1, (L+65535)/65536)
		ad := binary.BigEndian.AppendUint64(append([]byte(nil), fileID...), uint64(O))
		var out []byte
		pos := O
		for i := int64(0); i < n; i++ {
			plen := min(65536, L-i*65536)
			ct := file[pos : pos+plen+16]
			pos += plen + 16
			last := byte(0)
			if i == n-1 {
				last = 1
			}
			var aead cipher.AEAD
			var nonce []byte
			if cipherID == 1 {
				key, err := hkdf.Expand(sha256.New, P, "cryptvol-archive stream key "+string(R), 32)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := aes.NewCipher(key)
				aead, _ = cipher.NewGCM(b)
				nonce = append(binary.BigEndian.AppendUint64([]byte{0, 0, 0}, uint64(i)), last)
			} else {
				aead, _ = chacha20poly1305.NewX(P)
				var c [8]byte
				binary.BigEndian.PutUint64(c[:], uint64(i))
				nonce = append(append(append([]byte(nil), R...), c[1:]...), last)
			}
			p, err := aead.Open(nil, nonce, ct, ad)
			if err != nil {
				t.Fatalf("spec: stream at %d chunk %d does not open", O, i)
			}
			out = append(out, p...)
		}
		return out
	}

	type foot struct {
		gen, prevCommit, prevRun, firstGen, segOff, segLen, live uint64
		nonce                                                    []byte
	}
	readFoot := func(F uint64) foot {
		b := file[F : F+128]
		if string(b[:8]) != "CVA1FOOT" {
			t.Fatalf("spec: no footer magic at %d", F)
		}
		m := hmac.New(sha256.New, kFooter)
		m.Write(fileID)
		m.Write(binary.BigEndian.AppendUint64(nil, F))
		m.Write(b[:96])
		if !hmac.Equal(m.Sum(nil), b[96:]) {
			t.Fatalf("spec: footer MAC at %d", F)
		}
		return foot{be.Uint64(b[8:]), be.Uint64(b[16:]), be.Uint64(b[24:]), be.Uint64(b[32:]),
			be.Uint64(b[40:]), be.Uint64(b[48:]), be.Uint64(b[72:]), b[56:72]}
	}
	newest := readFoot(uint64(len(file) - 128))
	chain := []foot{newest}
	for f := newest; f.prevRun != 0; {
		f = readFoot(f.prevRun)
		chain = append([]foot{f}, chain...)
	}
	if chain[0].firstGen != 1 {
		t.Fatal("spec: chain does not end at a base")
	}
	members := map[string]specMember{}
	for _, f := range chain {
		seg := stream(kIndex, f.nonce, int64(f.segOff), int64(f.segLen))
		for len(seg) > 0 {
			kind := seg[0]
			seg = seg[1:]
			uv := func() uint64 {
				v, n := binary.Uvarint(seg)
				if n <= 0 {
					t.Fatal("spec: bad uvarint")
				}
				seg = seg[n:]
				return v
			}
			gen := uv()
			if gen < f.firstGen || gen > f.gen {
				t.Fatalf("spec: op of commit %d in run %d-%d", gen, f.firstGen, f.gen)
			}
			nl := uv()
			name := string(seg[:nl])
			seg = seg[nl:]
			if kind == 3 {
				delete(members, name)
				continue
			}
			mb := specMember{dir: kind == 2, mode: uint32(uv())}
			v, n := binary.Varint(seg)
			mb.mtime, seg = v, seg[n:]
			if kind == 1 {
				size, off := uv(), uv()
				R := seg[:16]
				seg = seg[16:]
				mb.data = stream(kRecord, R, int64(off), int64(size))
			}
			members[name] = mb
		}
	}
	if uint64(len(members)) != newest.live {
		t.Fatalf("spec: %d members, footer says %d", len(members), newest.live)
	}
	return members
}

func TestSpecDecoder(t *testing.T) {
	pw := []byte("correct horse battery staple")
	kf := bytes.Repeat([]byte{0xA5, 0x5A, 0x01}, 20)
	mtime := time.Date(2001, 9, 9, 1, 46, 40, 123456789, time.UTC)
	for _, c := range []archive.Cipher{archive.AES256GCM, archive.XChaCha20Poly1305} {
		for _, src := range []string{"password", "keyfile"} {
			t.Run(c.String()+"/"+src, func(t *testing.T) {
				cred := archive.Credentials{Password: pw}
				if src == "keyfile" {
					cred = archive.Credentials{KeyFile: kf}
				}
				path := filepath.Join(t.TempDir(), "s.cva")
				ctx := context.Background()
				a, err := archive.Create(ctx, path, cred, &archive.CreateOptions{
					Cipher: c, Argon2: archive.Argon2Params{MemoryKiB: 256, Passes: 2, Lanes: 2}, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				want := map[string][]byte{}
				add := func(name string, n int) {
					d := bytes.Repeat([]byte(name), n/len(name)+1)[:n]
					want[name] = d
					if err := a.Add(name, bytes.NewReader(d), archive.Info{ModTime: mtime, Mode: 0o751 | os.ModeSetuid}, &archive.AddOptions{Replace: true}); err != nil {
						t.Fatal(err)
					}
				}
				// Sizes around the chunk boundary, several commits so runs
				// merge, deletions and replacements so tombstones exist.
				for i, n := range []int{0, 1, 65535, 65536, 65537, 3*65536 + 7} {
					add(fmt.Sprintf("sizes/%d-%d", i, n), n)
				}
				if err := a.Commit(); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 12; i++ {
					add(fmt.Sprintf("more/ünïcödé-%02d.jpg", i), 100+i)
					if i%3 == 2 {
						delete(want, fmt.Sprintf("more/ünïcödé-%02d.jpg", i-1))
						if err := a.Remove(fmt.Sprintf("more/ünïcödé-%02d.jpg", i-1)); err != nil {
							t.Fatal(err)
						}
					}
					if i%4 == 3 {
						add("sizes/1-1", 5+i) // replace
					}
					if err := a.Commit(); err != nil {
						t.Fatal(err)
					}
				}
				if err := a.Add("a dir", nil, archive.Info{ModTime: mtime, Mode: 0o755 | os.ModeDir}, nil); err != nil {
					t.Fatal(err)
				}
				if err := a.Commit(); err != nil {
					t.Fatal(err)
				}
				if a.Segments() < 2 {
					t.Fatalf("only %d segments: the test wants a chain of runs", a.Segments())
				}
				a.Close()
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				got := specDecode(t, raw, pw, kf)
				if len(got) != len(want)+1 {
					t.Fatalf("spec decoder found %d members, want %d", len(got), len(want)+1)
				}
				for name, d := range want {
					g, ok := got[name]
					if !ok || g.dir || !bytes.Equal(g.data, d) || g.mode != 0o4751 || g.mtime != mtime.UnixNano() {
						t.Fatalf("member %q: spec decoder got %+v (%d bytes), want %d bytes mode 4751", name, ok, len(g.data), len(d))
					}
				}
				if d := got["a dir"]; !d.dir || d.mode != 0o755 {
					t.Fatalf("directory member: %+v", d)
				}
			})
		}
	}
}
