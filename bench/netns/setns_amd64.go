//go:build linux

package main

// sysSetns is setns(2) on linux/amd64 (the standard syscall package does not name it).
const sysSetns = 308
