// Package recent keeps the values of the keys put last, a bounded number
// of them: what a long-lived component remembers of things that come and
// go (the loss reasons of executors), asked for soon after they are put.
package recent
