package netty

import "time"

// WithInlineQuiet sets how long a connection must have had no write for a
// Send to write an ask or a reply itself: 0 makes every lone ask or reply
// try it.
func WithInlineQuiet(d time.Duration) Option {
	return optionFunc(func(o *options) { o.inlineQuiet = &d })
}
