//go:build linux

package main

// sysSetns is setns(2) on linux/arm64 (the standard syscall package does not name it).
const sysSetns = 268
