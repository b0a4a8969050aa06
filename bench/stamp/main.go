// Command stamp is the job of every's benchmark: it appends the time it
// started, in Unix nanoseconds, to a file, and can take a while, hold a mutex,
// and record when SIGTERM reached it.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	start := time.Now().UnixNano()
	file := flag.String("f", "", "append the start time to `FILE`")
	sleep := flag.Duration("sleep", 0, "then sleep `D`")
	term := flag.String("term", "", "on SIGTERM, write the time it came to `FILE` and exit 143")
	mutex := flag.String("mutex", "", "hold `DIR` while running; finding it taken, append a line to DIR.overlaps")
	flag.Parse()
	if *term != "" {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		go func() {
			<-c
			os.WriteFile(*term, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
			os.Exit(143)
		}()
	}
	if *mutex != "" {
		if err := os.Mkdir(*mutex, 0o700); err != nil {
			appendLine(*mutex+".overlaps", os.Getenv("EVERY_SLOT"))
		} else {
			defer os.Remove(*mutex)
		}
	}
	if *file != "" {
		appendLine(*file, strconv.FormatInt(start, 10)+" "+os.Getenv("EVERY_SLOT"))
	}
	time.Sleep(*sleep)
}

func appendLine(name, line string) {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f.WriteString(line + "\n")
	f.Close()
}
