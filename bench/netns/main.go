// Command delaylink joins two network namespaces with a delayed point-to-point IP link: it
// attaches to a TUN device in each (after entering that namespace on a locked OS thread) and
// copies every IP packet read from one to the other once a fixed one-way delay has passed, in
// both directions, in order. Optionally each direction is capped to a rate (bits per second), a
// packet leaving the cap once the ones before it have been serialised at that rate, and a queue
// holds at most -limit packets per direction (the next one is dropped, as a full link queue does).
//
// The kernels on both sides run real TCP over it: the sender's window, its ACK clock and its
// retransmissions all see a round trip of 2 × delay.
//
//	delaylink -a /var/run/netns/fjsrc -a-dev fjtun -b /var/run/netns/fjdst -b-dev fjtun -delay 25ms
//
// On SIGTERM or SIGINT it prints one JSON line per direction with the packets and bytes copied,
// the packets dropped, the TCP connections opened (SYNs without ACK, distinct by source port)
// and the p50 and p99 of the time each packet was actually held, then exits.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const (
	iffTun      = 0x0001
	iffNoPi     = 0x1000
	tunSetIff   = 0x400454ca
	cloneNewNet = 0x40000000
)

// openTun attaches to the TUN device `name` inside the network namespace at path `ns`. The
// namespace is entered on a thread of its own, which is never handed back to the runtime (the
// goroutine ends while still locked, so the thread exits with it).
func openTun(ns, name string) (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		nsf, err := os.Open(ns)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer nsf.Close()
		if _, _, e := syscall.RawSyscall(sysSetns, nsf.Fd(), cloneNewNet, 0); e != 0 {
			ch <- result{nil, fmt.Errorf("setns %s: %w", ns, e)}
			return
		}
		fd, err := syscall.Open("/dev/net/tun", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{nil, fmt.Errorf("open /dev/net/tun: %w", err)}
			return
		}
		var req [40]byte // struct ifreq: name[16], flags (short), padding
		copy(req[:15], name)
		binary.LittleEndian.PutUint16(req[16:], iffTun|iffNoPi)
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), tunSetIff, uintptr(unsafe.Pointer(&req[0]))); e != 0 {
			syscall.Close(fd)
			ch <- result{nil, fmt.Errorf("TUNSETIFF %s in %s: %w", name, ns, e)}
			return
		}
		ch <- result{os.NewFile(uintptr(fd), name), nil}
	}()
	r := <-ch
	return r.f, r.err
}

type packet struct {
	data    []byte
	arrived time.Time
	release time.Time
}

// direction copies packets read from `from` to `to` after the delay.
type direction struct {
	name    string
	from    *os.File
	to      *os.File
	delay   time.Duration
	rateBps float64
	queue   chan packet

	mu       sync.Mutex
	packets  int64
	bytes    int64
	dropped  int64
	holdHist [100001]int64 // hold time in 10 µs steps, the last bucket open-ended (≥ 1 s)
	syns     map[uint16]struct{}
	lastTx   time.Time
}

func (d *direction) read(mtu int) {
	for {
		buf := make([]byte, mtu)
		n, err := d.from.Read(buf)
		if err != nil {
			fmt.Fprintf(os.Stderr, "delaylink %s: read: %v\n", d.name, err)
			os.Exit(1)
		}
		now := time.Now()
		p := packet{data: buf[:n], arrived: now}
		d.mu.Lock()
		depart := now
		if d.rateBps > 0 {
			if d.lastTx.After(depart) {
				depart = d.lastTx
			}
			depart = depart.Add(time.Duration(float64(n*8) / d.rateBps * float64(time.Second)))
			d.lastTx = depart
		}
		d.noteSyn(p.data)
		d.mu.Unlock()
		p.release = depart.Add(d.delay)
		select {
		case d.queue <- p:
		default:
			d.mu.Lock()
			d.dropped++
			d.mu.Unlock()
		}
	}
}

// noteSyn records the source port of an IPv4 TCP SYN without ACK (a connection being opened).
func (d *direction) noteSyn(b []byte) {
	if len(b) < 20 || b[0]>>4 != 4 || b[9] != syscall.IPPROTO_TCP {
		return
	}
	ihl := int(b[0]&0x0f) * 4
	if len(b) < ihl+14 {
		return
	}
	flags := b[ihl+13]
	if flags&0x02 != 0 && flags&0x10 == 0 {
		d.syns[binary.BigEndian.Uint16(b[ihl:])] = struct{}{}
	}
}

func (d *direction) write() {
	for p := range d.queue {
		if wait := time.Until(p.release); wait > 0 {
			time.Sleep(wait)
		}
		if _, err := d.to.Write(p.data); err != nil {
			// A packet the kernel refuses (e.g. the device going down) is lost, as on a wire.
			continue
		}
		held := time.Since(p.arrived)
		bucket := int(held / (10 * time.Microsecond))
		if bucket >= len(d.holdHist) {
			bucket = len(d.holdHist) - 1
		}
		d.mu.Lock()
		d.packets++
		d.bytes += int64(len(p.data))
		d.holdHist[bucket]++
		d.mu.Unlock()
	}
}

type stats struct {
	Direction   string  `json:"direction"`
	Packets     int64   `json:"packets"`
	Bytes       int64   `json:"bytes"`
	Dropped     int64   `json:"dropped"`
	Connections int     `json:"connections"`
	HeldP50Ms   float64 `json:"heldP50Ms"`
	HeldP99Ms   float64 `json:"heldP99Ms"`
}

func (d *direction) stats() stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	q := func(f float64) float64 {
		want := int64(float64(d.packets) * f)
		var seen int64
		for i, c := range d.holdHist {
			seen += c
			if seen > want {
				return float64(i) * 0.01
			}
		}
		return 0
	}
	return stats{d.name, d.packets, d.bytes, d.dropped, len(d.syns), q(0.5), q(0.99)}
}

func main() {
	nsA := flag.String("a", "", "path of the first network namespace (e.g. /var/run/netns/fjsrc)")
	devA := flag.String("a-dev", "fjtun", "TUN device in the first namespace")
	nsB := flag.String("b", "", "path of the second network namespace")
	devB := flag.String("b-dev", "fjtun", "TUN device in the second namespace")
	delay := flag.Duration("delay", 0, "one-way delay added to every packet, each direction")
	rate := flag.Float64("rate", 0, "cap of each direction in bits per second (0: none)")
	limit := flag.Int("limit", 100000, "packets a direction may hold before it drops")
	mtu := flag.Int("mtu", 65535, "largest packet read from a device")
	flag.Parse()
	if *nsA == "" || *nsB == "" {
		fmt.Fprintln(os.Stderr, "delaylink: -a and -b are required")
		os.Exit(2)
	}
	a, err := openTun(*nsA, *devA)
	if err != nil {
		fmt.Fprintln(os.Stderr, "delaylink:", err)
		os.Exit(1)
	}
	b, err := openTun(*nsB, *devB)
	if err != nil {
		fmt.Fprintln(os.Stderr, "delaylink:", err)
		os.Exit(1)
	}
	mk := func(name string, from, to *os.File) *direction {
		return &direction{name: name, from: from, to: to, delay: *delay, rateBps: *rate, queue: make(chan packet, *limit), syns: map[uint16]struct{}{}}
	}
	dirs := []*direction{mk("a→b", a, b), mk("b→a", b, a)}
	for _, d := range dirs {
		go d.read(*mtu)
		go d.write()
	}
	fmt.Println(`{"ready":true}`)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	out := make([]stats, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, d.stats())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Direction < out[j].Direction })
	for _, s := range out {
		line, _ := json.Marshal(s)
		fmt.Println(string(line))
	}
}
