//go:build !race

package acceptance_test

const raceBuild = false
