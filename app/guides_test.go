package app

import (
	"html"
	"net/url"
	"regexp"
	"testing"

	"oomscope/bytesize"
	"oomscope/content"
	"oomscope/estimator"
	"oomscope/estimator/triage"
)

// presetLink is an internal link with its claim (data-expect): the verdict
// the guide's sentence states about the tool preset it links to.
var presetLink = regexp.MustCompile(`<a href="(/(?:estimate|triage|snapshot)\?[^"]*)"(?: data-expect="([^"]*)")?>`)

// Claims an estimator link can make.
const (
	claimFits       = "fits"
	claimDoesNotFit = "does not fit"
)

// TestGuideClaims evaluates every preset link the guides make with the
// packages behind the tools, and checks the verdict the link's sentence
// states. In Markdown a claim is the link's title:
//
//	[QLoRA with checkpointing](/estimate?method=qlora&ckpt=full "expect: fits")
//
// Estimator links claim "fits" or "does not fit"; triage links claim the
// cause of their example (a triage.Cause such as "fragmentation"). A
// preset link without a claim is an error: a guide that links to a setup
// says what it shows.
func TestGuideClaims(t *testing.T) {
	n := 0
	for _, g := range content.Guides() {
		for _, m := range presetLink.FindAllStringSubmatch(g.HTML, -1) {
			n++
			link, claim := html.UnescapeString(m[1]), html.UnescapeString(m[2])
			u, err := url.Parse(link)
			if err != nil {
				t.Errorf("guide %s: bad link %s: %v", g.Slug, link, err)
				continue
			}
			if claim == "" {
				t.Errorf("guide %s: preset link %s states no claim: give it a title \"expect: ...\"", g.Slug, link)
				continue
			}
			q := PageQuery(u.Query())
			switch u.Path {
			case "/estimate":
				req, err := estimator.ParseQuery(q)
				if err != nil {
					t.Errorf("guide %s: %s: %v", g.Slug, link, err)
					continue
				}
				res, err := estimator.Estimate(req)
				if err != nil {
					t.Errorf("guide %s: %s: %v", g.Slug, link, err)
					continue
				}
				got := claimDoesNotFit
				if res.Fits {
					got = claimFits
				}
				if claim != claimFits && claim != claimDoesNotFit {
					t.Errorf("guide %s: %s: claim %q is not %q or %q", g.Slug, link, claim, claimFits, claimDoesNotFit)
				} else if got != claim {
					t.Errorf("guide %s: %s says it %s, but the estimator says it %s: %s of %s usable",
						g.Slug, link, claim, got, bytesize.Format(res.TotalBytes, bytesize.Binary), bytesize.Format(res.UsableBytes, bytesize.Binary))
				}
			case "/triage":
				ex, ok := exampleByID(q.Get(triageExampleKey))
				if !ok {
					t.Errorf("guide %s: %s names no triage example", g.Slug, link)
					continue
				}
				when, err := triage.ParseWhen(q.Get(triageWhenKey))
				if err != nil {
					t.Errorf("guide %s: %s: %v", g.Slug, link, err)
				}
				res := triage.Triage(ex.Text, triage.Options{When: when})
				if len(res.Findings) != 1 {
					t.Errorf("guide %s: %s: %d findings", g.Slug, link, len(res.Findings))
					continue
				}
				if got := string(res.Findings[0].Cause); got != claim {
					t.Errorf("guide %s: %s says the cause is %q, triage says %q", g.Slug, link, claim, got)
				}
			default:
				t.Errorf("guide %s: %s: no claim can be checked for %s", g.Slug, link, u.Path)
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d preset links in the guides", n)
	}
}
