//go:build !race

package tools

const raceBuild = false
