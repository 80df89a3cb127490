package result

// Text is the figure as the step tables show it (`spanbench run`,
// `spanbench report`, the HTML report): a latency as a duration, other
// figures as percents, "x" after a failing one, its note when it has one.
func (f SearchFigure) Text() string { return figureText(f) }

// FormatRate prints a rate in operations per second as the step tables
// do: six significant digits, no trailing zeros.
func FormatRate(r float64) string { return rateText(r) }
