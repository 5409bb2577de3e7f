package examweb

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestReviewIsOneSelfContainedFile: the review holds each question's checks with their evidence, the
// learner's writes and notes, the coaching and the reference solution with its why, and needs nothing
// beside itself; what the learner typed is shown, never run.
func TestReviewIsOneSelfContainedFile(t *testing.T) {
	fake := newFakeExam(time.Hour)
	rep, err := fake.Grade(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	notes := map[int]Note{2: {Text: "selector? <script>alert(1)</script>", Done: true}}
	if err := WriteReview(&b, Review{Report: rep, Notes: notes}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"not passed", "56.3%", "service/shop has no endpoints", "the Service selects the Deployment&#39;s Pods",
		"<code>0:29</code> on cka2655: patch <code>service/shop</code> in media",
		"the question was on host cka2311", "you marked it done", "selector? &lt;script&gt;",
		"kubectl -n media patch service shop", "A Service sends traffic to the Pods its selector matches.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the review lacks %q", want)
		}
	}
	for _, outside := range []string{"<script", "src=", "<link", "http://", "https://"} {
		if strings.Contains(page, outside) {
			t.Errorf("the review is not self-contained: it has %q", outside)
		}
	}
}
