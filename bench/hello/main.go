// Command hello is the benchmark's reference for start-up: a static Go
// hello-world, built as every is, against which `every --version` is timed.
package main

import "fmt"

func main() { fmt.Println("hello, world") }
