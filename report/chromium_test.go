package report

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// The browser window of the screenshot, and how long the browser may take.
const (
	screenshotWidth   = 1280
	screenshotHeight  = 1600
	screenshotTimeout = 2 * time.Minute
)

// podKillFixture is a real report: the gate's pod-kill spec on the local
// cluster, with its event timeline (the README's screenshot is its page).
const podKillFixture = "testdata/report-pod-kill.json"

// Colours the page's CSS gives what the checks below look for.
var (
	faultFill   = color.RGBA{0xfd, 0xe2, 0xe2, 0xff} // svg rect.fault
	leaderMark  = color.RGBA{0x7c, 0x3a, 0xed, 0xff} // .ev-leader
	isrMark     = color.RGBA{0xdc, 0x26, 0x26, 0xff} // .ev-isr-shrunk
	fencedMark  = color.RGBA{0x9f, 0x12, 0x39, 0xff} // .ev-fenced
	podMark     = color.RGBA{0x02, 0x84, 0xc7, 0xff} // .ev-pod
	whitePixel  = color.RGBA{0xff, 0xff, 0xff, 0xff}
	minFaultPix = 5000 // two charts shading a 10 s fault window, 1280 px wide
	minMarkPix  = 40   // one mark: a 2 px line across a lane
)

// TestChromiumRendersReport renders pages in headless Chromium and checks
// the screenshots: the right size, not blank, the fault window shaded; on
// the real pod-kill report, the event lanes drawn (the leader moves, the
// ISR shrink, the fencing and the pods, each in its colour). It needs
// Debian's chromium; without it the test fails unless
// KAFKACHAOS_SKIP_BROWSER=1. With KAFKACHAOS_SCREENSHOT=path it copies the
// pod-kill page's screenshot there (docs/report.png is made so).
func TestChromiumRendersReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a headless browser: not with -short")
	}
	if os.Getenv("KAFKACHAOS_SKIP_BROWSER") == "1" {
		t.Skip("KAFKACHAOS_SKIP_BROWSER=1")
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not on PATH (%v): apt-get install chromium, or set KAFKACHAOS_SKIP_BROWSER=1 to skip this test", err)
	}
	tests := []struct {
		fixture string
		marks   map[string]color.RGBA // lane colours that must be drawn
		keep    bool                  // the screenshot KAFKACHAOS_SCREENSHOT asks for
	}{
		{fixture: fixturePath},
		{fixture: podKillFixture, keep: true, marks: map[string]color.RGBA{
			"leader moved": leaderMark, "ISR shrunk": isrMark, "broker fenced": fencedMark, "pod": podMark}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.fixture), func(t *testing.T) {
			run, err := Read(tt.fixture)
			if err != nil {
				t.Fatal(err)
			}
			raw, img := renderPNG(t, browser, run, tt.fixture)
			if b := img.Bounds(); b.Dx() != screenshotWidth || b.Dy() != screenshotHeight {
				t.Errorf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), screenshotWidth, screenshotHeight)
			}
			colors, counts := colorCounts(img)
			total := img.Bounds().Dx() * img.Bounds().Dy()
			t.Logf("%d distinct colors, %d fault-colored and %d white pixels of %d", colors, counts[faultFill], counts[whitePixel], total)
			if colors < 100 {
				t.Errorf("only %d distinct colors: the page looks blank", colors)
			}
			if counts[whitePixel] < total/2 {
				t.Errorf("%d of %d pixels are white: want a white page", counts[whitePixel], total)
			}
			if counts[faultFill] < minFaultPix {
				t.Errorf("%d pixels of the fault window's color %v: the fault window is not shaded", counts[faultFill], faultFill)
			}
			for what, c := range tt.marks {
				if counts[c] < minMarkPix {
					t.Errorf("%d pixels of the %q lane colour %v: the event lanes are not drawn", counts[c], what, c)
				}
			}
			if dst := os.Getenv("KAFKACHAOS_SCREENSHOT"); dst != "" && tt.keep {
				if err := os.WriteFile(dst, raw, 0o644); err != nil {
					t.Fatalf("KAFKACHAOS_SCREENSHOT: %v", err)
				}
				t.Logf("screenshot copied to %s (%d bytes)", dst, len(raw))
			}
		})
	}
}

// renderPNG writes run's page and returns Chromium's screenshot of it.
func renderPNG(t *testing.T, browser string, run Run, source string) ([]byte, image.Image) {
	t.Helper()
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var html bytes.Buffer
	if err := WriteHTML(&html, run, HTMLOptions{Source: source}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, html.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	screenshot(t, browser, page, shot, filepath.Join(dir, "profile"))
	raw, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("screenshot is no PNG: %v", err)
	}
	return raw, img
}

// screenshot runs headless Chromium on page, writing a PNG of the window
// to out. Chromium runs in its own process group, which is killed when it
// ends or times out, so none of its helper processes outlives the test.
func screenshot(t *testing.T, browser, page, out, profile string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), screenshotTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--force-device-scale-factor=1",
		"--user-data-dir="+profile,
		"--window-size="+strconv.Itoa(screenshotWidth)+","+strconv.Itoa(screenshotHeight),
		"--screenshot="+out, "file://"+page)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", browser, err)
	}
	err := cmd.Wait()
	// Whatever chromium left in its group (zygote, GPU or network
	// service processes) goes with it.
	if kerr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); kerr != nil && !errors.Is(kerr, syscall.ESRCH) {
		t.Errorf("killing chromium's process group %d: %v", cmd.Process.Pid, kerr)
	}
	if ctx.Err() != nil {
		t.Fatalf("chromium did not finish within %s:\n%s", screenshotTimeout, output.String())
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, output.String())
	}
}

// colorCounts returns how many distinct colors img has, and how many
// pixels each has.
func colorCounts(img image.Image) (distinct int, counts map[color.RGBA]int) {
	counts = map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	return len(counts), counts
}
