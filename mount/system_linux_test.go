package mount

import "testing"

// TestParseMountInfo reads mountinfo lines with optional fields and the
// kernel's octal escapes.
func TestParseMountInfo(t *testing.T) {
	data := []byte(`22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
35 24 0:31 / /tmp/my\040mnt rw,nosuid,nodev,relatime shared:20 master:1 - fuse.cryptvol /tmp/vol\040one.hc rw,user_id=0,group_id=0
36 24 7:0 / /mnt/data rw,relatime - ext4 /dev/loop0 rw
garbage line
`)
	got := parseMountInfo(data)
	want := []MountPoint{
		{Dir: "/proc", FSType: "proc", Source: "proc", Dev: "0:21"},
		{Dir: "/tmp/my mnt", FSType: "fuse.cryptvol", Source: "/tmp/vol one.hc", Dev: "0:31"},
		{Dir: "/mnt/data", FSType: "ext4", Source: "/dev/loop0", Dev: "7:0"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
