package chart

import (
	"bufio"
	"bytes"
	"context"
	"image"
	"image/png"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// findChromium returns a headless-capable Chromium, or skips.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH (apt-get install chromium; .ci/run installs it)")
	return ""
}

// screenshot opens page (a file) in headless Chromium with every network
// request sent to a local proxy, and returns the screenshot and how many
// connections the proxy saw.
func screenshot(t *testing.T, browser, page string) (image.Image, []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var (
		mu   sync.Mutex
		reqs []string
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			mu.Lock()
			reqs = append(reqs, strings.TrimSpace(line))
			mu.Unlock()
			c.Close()
		}
	}()
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{
		"--headless", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
		// The browser's own services, which would talk to Google's hosts
		// whatever the page does.
		"--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater,DialMediaRouteProvider",
		"--no-pings", "--disable-client-side-phishing-detection", "--disable-domain-reliability", "--disable-breakpad",
		"--metrics-recording-only", "--no-default-browser-check", "--disable-field-trial-config",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
		// Every request the page makes goes to the counting proxy.
		"--proxy-server=http://" + ln.Addr().String(), "--proxy-bypass-list=<-loopback>",
		"--window-size=1280,1600", "--screenshot=" + shot, "file://" + page,
	}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...)
	}
	out, err := exec.CommandContext(ctx, browser, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return img, append([]string(nil), reqs...)
}

// browserServices are the hosts Chromium itself talks to whatever page it
// shows (component updates, sign-in), which the flags above do not all
// silence in Debian's build; a request to any other host came from the page.
var browserServices = map[string]bool{
	"update.googleapis.com": true, "accounts.google.com": true, "clients2.google.com": true,
	"www.googleapis.com": true, "edgedl.me.gvt1.com": true, "redirector.gvt1.com": true,
}

// pageRequests drops the browser's own requests from a proxy's log of
// request lines ("CONNECT host:443 ..." or "GET http://host/path ...").
func pageRequests(reqs []string) []string {
	var out []string
	for _, r := range reqs {
		f := strings.Fields(r)
		if len(f) < 2 {
			continue
		}
		host := f[1]
		if u, err := url.Parse(host); err == nil && u.Host != "" {
			host = u.Host
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !browserServices[host] {
			out = append(out, r)
		}
	}
	return out
}

// TestHTMLReportInChromium opens a report in a real browser: the page
// renders (the screenshot holds the bars' colours and text, not a blank
// page) and makes no network request. A control page that loads an image
// shows that the proxy does see requests.
func TestHTMLReportInChromium(t *testing.T) {
	browser := findChromium(t)
	dir := t.TempDir()

	control := filepath.Join(dir, "control.html")
	os.WriteFile(control, []byte(`<!DOCTYPE html><html><body><img src="http://cryptvol.invalid/x.png"></body></html>`), 0o644)
	if _, reqs := screenshot(t, browser, control); len(pageRequests(reqs)) == 0 {
		t.Fatal("the control page's image request did not reach the proxy: the test could not see a request")
	}

	r := loadRun(t, KindCiphers)
	r.Date, r.Version = "2026-12-01 10:00 UTC", "cryptvol test"
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, r); err != nil {
		t.Fatal(err)
	}
	f.Close()
	img, reqs := screenshot(t, browser, page)
	if fetched := pageRequests(reqs); len(fetched) != 0 {
		t.Errorf("the report made %d network request(s), it must make none: %q", len(fetched), fetched)
	}
	b := img.Bounds()
	colours := map[uint32]int{}
	white := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>8)<<16|(g>>8)<<8|bl>>8]++
			if r>>8 > 0xf8 && g>>8 > 0xf8 && bl>>8 > 0xf8 {
				white++
			}
		}
	}
	total := (b.Dx() / 2) * (b.Dy() / 2)
	if white > total*98/100 {
		t.Errorf("the screenshot is blank: %d of %d sampled pixels white", white, total)
	}
	// The three series' colours (Okabe-Ito blue, orange, green) are drawn.
	for _, c := range []uint32{0x0072B2, 0xE69F00, 0x009E73} {
		if colours[c] < 50 {
			t.Errorf("colour #%06X covers %d sampled pixels: the bars were not drawn", c, colours[c])
		}
	}
	if len(colours) < 20 {
		t.Errorf("only %d colours in the screenshot: text was not rendered", len(colours))
	}
}
