package webdav

import (
	"encoding/xml"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/net/webdav"
)

// deadProps holds the properties clients set with PROPPATCH, by path, for
// the life of the server (the filesystems inside volumes have no place
// for them). MOVE carries them along, DELETE drops them, COPY copies them
// through the handles.
type deadProps struct {
	mu sync.Mutex
	m  map[string]map[xml.Name]webdav.Property
}

func newDeadProps() *deadProps {
	return &deadProps{m: map[string]map[xml.Name]webdav.Property{}}
}

func (d *deadProps) get(p string) map[xml.Name]webdav.Property {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[xml.Name]webdav.Property, len(d.m[p]))
	for k, v := range d.m[p] {
		out[k] = v
	}
	return out
}

func (d *deadProps) patch(p string, patches []webdav.Proppatch) []webdav.Propstat {
	d.mu.Lock()
	defer d.mu.Unlock()
	ps := webdav.Propstat{Status: http.StatusOK}
	for _, patch := range patches {
		for _, prop := range patch.Props {
			ps.Props = append(ps.Props, webdav.Property{XMLName: prop.XMLName})
			if patch.Remove {
				delete(d.m[p], prop.XMLName)
				continue
			}
			if d.m[p] == nil {
				d.m[p] = map[xml.Name]webdav.Property{}
			}
			d.m[p][prop.XMLName] = prop
		}
	}
	return []webdav.Propstat{ps}
}

// under reports whether q is p or inside it.
func under(q, p string) bool {
	return q == p || p == "/" || strings.HasPrefix(q, p+"/")
}

func (d *deadProps) remove(p string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for q := range d.m {
		if under(q, p) {
			delete(d.m, q)
		}
	}
}

func (d *deadProps) rename(from, to string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for q := range d.m {
		if under(q, to) {
			delete(d.m, q)
		}
	}
	moved := map[string]map[xml.Name]webdav.Property{}
	for q, v := range d.m {
		if under(q, from) {
			moved[to+strings.TrimPrefix(q, from)] = v
			delete(d.m, q)
		}
	}
	for q, v := range moved {
		d.m[q] = v
	}
}
