package webui

// This file holds the flow page's drawing: where each node and edge of the
// SVG goes, computed on the server (the template only writes it out).

import (
	"fmt"
	"strings"
)

// Geometry of the flow SVG, in pixels.
const (
	flowRow    = 44  // the height of a node's row
	flowBoxH   = 34  // a node's height
	flowBoxW   = 220 // a node's width
	flowGap    = 230 // between a column of nodes and the env
	flowMargin = 16
)

// flowBox is a node of the SVG: a box with a title and a line of figures.
type flowBox struct {
	X, Y, W, H   int
	Title, Line  string
	Class        string
	Busy         bool // its mailbox or outbound queue holds something
	LinkX, LinkY int  // where its edge meets it
}

// flowEdge is a line from a node to the env with a label at its middle.
type flowEdge struct {
	X1, Y1, X2, Y2 int
	LX, LY         int
	Label          string
	Width          float64 // the stroke width, growing with the rate
	Class          string
}

// flowDrawing is the flow page's data: the figures and the SVG's parts.
type flowDrawing struct {
	Flow
	W, H  int
	Env   flowBox
	Boxes []flowBox
	Edges []flowEdge
}

// drawFlow lays the flow out: endpoints in a column on the left, the env
// in the middle, peers in a column on the right.
func drawFlow(f Flow) flowDrawing {
	rows := max(len(f.Endpoints), len(f.Peers), 1)
	h := 2*flowMargin + rows*flowRow
	leftX, envX := flowMargin, flowMargin+flowBoxW+flowGap
	rightX := envX + flowBoxW + flowGap
	d := flowDrawing{Flow: f, W: rightX + flowBoxW + flowMargin, H: h}
	envH := max(flowBoxH, rows*flowRow-(flowRow-flowBoxH))
	d.Env = flowBox{X: envX, Y: flowMargin, W: flowBoxW, H: envH, Title: f.Env, Line: f.Address, Class: "env"}
	top := func(i, n int) int { return flowMargin + (rows-n)*flowRow/2 + i*flowRow }
	for i, e := range f.Endpoints {
		b := flowBox{X: leftX, Y: top(i, len(f.Endpoints)), W: flowBoxW, H: flowBoxH, Title: e.Name,
			Line: fmt.Sprintf("mailbox %d · %d handled", e.Queued, e.Received), Class: "endpoint", Busy: e.Queued > 0}
		b.LinkX, b.LinkY = b.X+b.W, b.Y+b.H/2
		d.Boxes = append(d.Boxes, b)
		d.Edges = append(d.Edges, edge(b.LinkX, b.LinkY, envX, b.LinkY, rateLabel(e.Rate, "msg/s"), e.Rate/50, "inbound"))
	}
	for i, p := range f.Peers {
		title := p.Identity
		if p.ExecutorID != "" {
			title = "executor " + p.ExecutorID + " · " + shortIdentity(p.Identity)
		}
		b := flowBox{X: rightX, Y: top(i, len(f.Peers)), W: flowBoxW, H: flowBoxH, Title: title,
			Line: fmt.Sprintf("queued %s · ↑%s ↓%s", byteSize(float64(p.QueuedBytes)), byteSize(float64(p.SentBytes)),
				byteSize(float64(p.ReceivedBytes))), Class: "peer", Busy: p.QueuedBytes > 0}
		b.LinkX, b.LinkY = b.X, b.Y+b.H/2
		d.Boxes = append(d.Boxes, b)
		label := "↑" + rateLabel(p.SendRate, "B/s") + " ↓" + rateLabel(p.ReceiveRate, "B/s")
		d.Edges = append(d.Edges, edge(envX+flowBoxW, b.LinkY, b.LinkX, b.LinkY, label, (max(0, p.SendRate)+max(0, p.ReceiveRate))/20000, "peer"))
	}
	return d
}

func edge(x1, y1, x2, y2 int, label string, weight float64, class string) flowEdge {
	return flowEdge{X1: x1, Y1: y1, X2: x2, Y2: y2, LX: (x1 + x2) / 2, LY: (y1+y2)/2 - 4, Label: label,
		Width: min(1+weight, 8), Class: class}
}

// rateLabel formats a rate, "—" before the first window.
func rateLabel(r float64, unit string) string {
	switch {
	case r < 0:
		return "—"
	case unit == "B/s":
		return byteSize(r) + "/s"
	}
	return fmt.Sprintf("%.1f %s", r, unit)
}

// byteSize formats a number of bytes: 512 B, 1.5 KiB, 3.2 MiB.
func byteSize(b float64) string {
	switch {
	case b < 1024:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return fmt.Sprintf("%.1f KiB", b/1024)
	}
	return fmt.Sprintf("%.1f MiB", b/(1<<20))
}

// shortIdentity is a peer's identity as a box has room for: a client id
// (32 hex digits) cut to its first 8.
func shortIdentity(id string) string {
	const keep = len("client-") + 8
	if strings.HasPrefix(id, "client-") && len(id) > keep {
		return id[:keep] + "…"
	}
	return id
}
