package nfs

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
)

// go-nfs does not implement MOUNTPROC3_EXPORT (the export list), and
// answers it with PROC_UNAVAIL, on which libnfs's mount fails: it asks for
// the list before it mounts. The list must not name the export (it is the
// secret, and anyone who can connect may ask), so the answer is the empty
// list. go-nfs's handler type is not open to other packages, so the call
// is answered at the connection: exportConn turns an EXPORT call into the
// MOUNT NULL call (which go-nfs answers with an empty success) and swaps
// that answer for an empty export list on the way out.
const (
	progMount     = 100005
	procMountNull = 0
	procExport    = 5
)

type exportConn struct {
	net.Conn
	in      *bufio.Reader
	pending []byte // the rest of the record being handed to go-nfs

	mu      sync.Mutex
	exports map[uint32]bool // xids of EXPORT calls turned into NULL
}

func newExportConn(c net.Conn) *exportConn {
	return &exportConn{Conn: c, in: bufio.NewReaderSize(c, 64<<10), exports: map[uint32]bool{}}
}

func (c *exportConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		if err := c.nextRecord(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// nextRecord reads one record (its marker and body) into pending,
// rewriting an EXPORT call.
func (c *exportConn) nextRecord() error {
	var mark [4]byte
	if _, err := io.ReadFull(c.in, mark[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(mark[:]) &^ (1 << 31)
	rec := make([]byte, 4+int(size))
	copy(rec, mark[:])
	if _, err := io.ReadFull(c.in, rec[4:]); err != nil {
		return err
	}
	body := rec[4:]
	// xid, msg_type (0 = call), rpcvers, prog, vers, proc
	if len(body) >= 24 && binary.BigEndian.Uint32(body[4:]) == 0 &&
		binary.BigEndian.Uint32(body[12:]) == progMount && binary.BigEndian.Uint32(body[20:]) == procExport {
		binary.BigEndian.PutUint32(body[20:], procMountNull)
		c.mu.Lock()
		c.exports[binary.BigEndian.Uint32(body)] = true
		c.mu.Unlock()
	}
	c.pending = rec
	return nil
}

// nullReplySize is the record go-nfs writes for MOUNT NULL, in one
// Write (its writer flushes once per reply): marker, xid, REPLY,
// MSG_ACCEPTED, AUTH_NULL verifier (flavor, length), SUCCESS.
const nullReplySize = 4 + 4 + 4 + 4 + 8 + 4

func (c *exportConn) Write(p []byte) (int, error) {
	if len(p) == nullReplySize {
		xid := binary.BigEndian.Uint32(p[4:])
		c.mu.Lock()
		isExport := c.exports[xid]
		delete(c.exports, xid)
		c.mu.Unlock()
		if isExport {
			reply := make([]byte, nullReplySize+4) // + exports: no entry
			copy(reply, p)
			binary.BigEndian.PutUint32(reply, (1<<31)|uint32(len(reply)-4))
			if _, err := c.Conn.Write(reply); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}
