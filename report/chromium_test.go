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

// TestChromiumRendersReport renders the fixture's page in headless
// Chromium and checks the screenshot: the right size, not blank, the fault
// window shaded. It needs Debian's chromium; without it the test fails
// unless KAFKACHAOS_SKIP_BROWSER=1. With KAFKACHAOS_SCREENSHOT=path it
// copies the screenshot there (docs/report.png is made so).
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
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var html bytes.Buffer
	if err := WriteHTML(&html, loadFixture(t), HTMLOptions{Source: fixturePath}); err != nil {
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
	if b := img.Bounds(); b.Dx() != screenshotWidth || b.Dy() != screenshotHeight {
		t.Errorf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), screenshotWidth, screenshotHeight)
	}
	// The fill of the fault phase's band: svg rect.fault in the page's CSS.
	faultFill := color.RGBA{0xfd, 0xe2, 0xe2, 0xff}
	colors, fault, white := colorCounts(img, faultFill)
	total := img.Bounds().Dx() * img.Bounds().Dy()
	t.Logf("%d distinct colors, %d fault-colored and %d white pixels of %d", colors, fault, white, total)
	if colors < 100 {
		t.Errorf("only %d distinct colors: the page looks blank", colors)
	}
	if white < total/2 {
		t.Errorf("%d of %d pixels are white: want a white page", white, total)
	}
	// Two charts of the first spec shade its 10 s fault window: far more
	// than 5000 pixels at 1280 wide.
	if fault < 5000 {
		t.Errorf("%d pixels of the fault window's color %v: the fault window is not shaded", fault, faultFill)
	}

	if dst := os.Getenv("KAFKACHAOS_SCREENSHOT"); dst != "" {
		if err := os.WriteFile(dst, raw, 0o644); err != nil {
			t.Fatalf("KAFKACHAOS_SCREENSHOT: %v", err)
		}
		t.Logf("screenshot copied to %s (%d bytes)", dst, len(raw))
	}
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

// colorCounts returns how many distinct colors img has, and how many of its
// pixels are the fill color and white.
func colorCounts(img image.Image, fill color.RGBA) (distinct, filled, white int) {
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			seen[c] = true
			switch c {
			case fill:
				filled++
			case color.RGBA{0xff, 0xff, 0xff, 0xff}:
				white++
			}
		}
	}
	return len(seen), filled, white
}
