package examples

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// WordCountTask is the name of WordCount's task function.
const WordCountTask = "examples.WordCount.count"

func init() {
	cluster.RegisterApp("WordCount", WordCount)
	endpoints.RegisterTask(WordCountTask, countWords)
}

type wcSplit struct {
	Path       string `json:"path"`
	Start, End int64
}

// WordCount counts the words of args[0] over about args[1] partitions
// (default 4) and prints the 20 most frequent, with the totals. args[0] is
// a file or a folder, whose files are all read (as Spark's textFile: not
// its subfolders, nor its files whose names start with "." or "_").
func WordCount(ctx context.Context, sc *cluster.AppContext, args []string) error {
	if len(args) < 1 {
		return errors.New("usage: WordCount FILE|FOLDER [partitions]")
	}
	path := args[0]
	if !filepath.IsAbs(path) {
		path = filepath.Join(sc.Conf().Get(cluster.KeySubmitWorkingDir, "."), path)
	}
	parts := 4
	if len(args) > 1 {
		n, err := strconv.Atoi(args[1])
		if err != nil || n < 1 {
			return fmt.Errorf("WordCount: the number of partitions must be a positive integer, not %q", args[1])
		}
		parts = n
	}
	splits, err := wordCountSplits(path, parts)
	if err != nil {
		return fmt.Errorf("WordCount: %w", err)
	}
	d, err := sc.Driver(ctx)
	if err != nil {
		return err
	}
	payloads := make([][]byte, len(splits))
	for i, s := range splits {
		payloads[i], _ = json.Marshal(s)
	}
	results, err := d.RunJob(ctx, WordCountTask, payloads)
	if err != nil {
		return err
	}
	total := map[string]int{}
	for _, r := range results {
		var counts map[string]int
		if err := json.Unmarshal(r, &counts); err != nil {
			return fmt.Errorf("WordCount: malformed task result: %w", err)
		}
		for w, n := range counts {
			total[w] += n
		}
	}
	words := make([]string, 0, len(total))
	sum := 0
	for w, n := range total {
		words = append(words, w)
		sum += n
	}
	sort.Slice(words, func(i, j int) bool {
		if total[words[i]] != total[words[j]] {
			return total[words[i]] > total[words[j]]
		}
		return words[i] < words[j]
	})
	for i, w := range words {
		if i == 20 {
			break
		}
		sc.Printf("%s: %d\n", w, total[w])
	}
	sc.Printf("Total: %d words, %d distinct\n", sum, len(total))
	return nil
}

// wordCountSplits splits the file path, or the files of the folder path,
// into about parts splits: each file gets a share of them by its size, and
// at least one.
func wordCountSplits(path string, parts int) ([]wcSplit, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	type file struct {
		path string
		size int64
	}
	var files []file
	if !st.IsDir() {
		files = append(files, file{path, st.Size()})
	} else {
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
				continue
			}
			info, err := os.Stat(filepath.Join(path, e.Name()))
			if err != nil {
				return nil, err
			}
			if info.Mode().IsRegular() {
				files = append(files, file{filepath.Join(path, e.Name()), info.Size()})
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("the folder %s holds no files to read", path)
		}
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	var splits []wcSplit
	for _, f := range files {
		n := int64(1)
		if total > 0 {
			n = max(1, (int64(parts)*f.size+total/2)/total)
		}
		n = min(n, max(1, f.size))
		for i := int64(0); i < n; i++ {
			splits = append(splits, wcSplit{Path: f.path, Start: f.size * i / n, End: f.size * (i + 1) / n})
		}
	}
	return splits, nil
}

// countWords counts the words of the lines that start in [Start, End): a
// split that does not start the file skips its first (partial) line, and
// every split reads on to the end of its last line.
func countWords(ctx context.Context, _ endpoints.TaskContext, payload []byte) ([]byte, error) {
	var s wcSplit
	if err := json.Unmarshal(payload, &s); err != nil {
		return nil, err
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pos := s.Start
	if s.Start > 0 {
		// Start one byte early: if that byte ends a line, the split starts on
		// a line boundary and skips nothing.
		pos = s.Start - 1
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(f, 1<<16)
	if s.Start > 0 {
		skipped, err := r.ReadString('\n')
		pos += int64(len(skipped))
		if err != nil {
			return json.Marshal(map[string]int{})
		}
	}
	counts := map[string]int{}
	for pos < s.End {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := r.ReadString('\n')
		pos += int64(len(line))
		for _, w := range strings.FieldsFunc(strings.ToLower(line), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsNumber(c) && c != '\'' }) {
			if w = strings.Trim(w, "'"); w != "" {
				counts[w]++
			}
		}
		if err != nil {
			break
		}
	}
	return json.Marshal(counts)
}
