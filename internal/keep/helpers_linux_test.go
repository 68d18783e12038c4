package keep

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// dropKeyring removes a test's entries.
func dropKeyring(s Store) { RemoveKeyring(s.(*keyring).name) }

// agentsIn lists the processes that run with dir as their runtime
// directory (CRYPTVOL_RUNTIME_DIR in their environment): the agents that
// this test's commands started and that still live.
func agentsIn(dir string) []int {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", p.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == "CRYPTVOL_RUNTIME_DIR="+dir {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
