// Package examples holds the example applications compiled into the
// sparkrpc binary, registered by name for submit's --class:
//
//   - SparkPi [slices]: estimates π by Monte Carlo sampling over slices
//     partitions (default 2), one task per partition, and prints
//     "Pi is roughly 3.14...". Each partition draws from its own seeded
//     generator, so the answer does not depend on where tasks ran or how often
//     they were retried. spark.examples.sparkPi.taskDelay (e.g. 500ms) makes
//     every task take at least that long, to watch the progress bar.
//   - WordCount FILE [partitions]: counts the words of a text file, each task
//     counting a byte range of it, and prints the most frequent words. The
//     file must be readable at the same path by every executor.
//   - ErrorApp [message]: runs a small job, then fails with message, to show
//     how a failed application is reported.
//   - NoContextApp: never brings up its driver; in cluster mode the
//     application master gives up after spark.yarn.am.waitTime.
//
// Importing the package (for its side effects) registers the applications
// and their task functions.
package examples
