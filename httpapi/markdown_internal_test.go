package httpapi

import (
	"strings"
	"testing"
)

// TestRenderMarkdown: the docs page shows the descriptions' Markdown as HTML, escapes
// everything else, and no description can put markup, a script or a non-http link in the page.
func TestRenderMarkdown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     string
		want   []string // substrings of the HTML
		reject []string // substrings the HTML must not have
	}{
		{"plain text is a paragraph", "Places one order.", []string{"<p>Places one order.</p>"}, nil},
		{"inline code", "Send `Authorization: Bearer` on `/partner` routes.",
			[]string{"Send <code>Authorization: Bearer</code> on <code>/partner</code> routes."}, []string{"`"}},
		{"markup inside code is escaped", "With `If-Match: <version>`, a stale version is 409.",
			[]string{"<code>If-Match: &lt;version&gt;</code>"}, []string{"<version>"}},
		{"emphasis and strong", "*once* and **never**", []string{"<em>once</em>", "<strong>never</strong>"}, []string{"*"}},
		{"paragraphs", "First.\n\nSecond.", []string{"<p>First.</p>", "<p>Second.</p>"}, nil},
		{"bullet list", "Routes:\n\n- `direct`\n- `home_drop`\n", []string{"<ul>", "<li><code>direct</code></li>", "<li><code>home_drop</code></li>"}, nil},
		{"numbered list", "1. first\n2. second\n", []string{"<ol>", "<li>first</li>"}, nil},
		{"table", "| code | meaning |\n| --- | --- |\n| `409` | stale |\n",
			[]string{"<table>", "<th>code</th>", "<td><code>409</code></td>"}, []string{"| ---"}},
		{"https link", "See [the guide](https://example.ca/guide).", []string{`<a href="https://example.ca/guide">the guide</a>`}, nil},
		{"relative link", "See [the spec](/openapi.json).", []string{`<a href="/openapi.json">the spec</a>`}, nil},
		{"angle-bracket autolink", "<https://example.ca/x>", []string{`<a href="https://example.ca/x">https://example.ca/x</a>`}, nil},
		{"bare URL stays text", "`https://` or http://localhost", []string{"http://localhost"}, []string{"<a "}},
		{"characters are escaped", `a < b & "c" > d`, []string{"a &lt; b &amp; &quot;c&quot; &gt; d"}, nil},

		// Hostile input: none of it may become markup or a script.
		{"script element", "<script>alert(1)</script>", []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}, []string{"<script"}},
		{"inline script element", "Hi <script>alert(1)</script> there", []string{"Hi &lt;script&gt;alert(1)&lt;/script&gt; there"}, []string{"<script"}},
		{"event handler", `<img src=x onerror="alert(1)">`, []string{"&lt;img src=x onerror="}, []string{"<img"}},
		{"raw block HTML", "<div onclick=\"x()\">\nhi\n</div>", []string{"&lt;div onclick="}, []string{"<div"}},
		{"iframe", "<iframe src=\"https://evil.example\"></iframe>", []string{"&lt;iframe"}, []string{"<iframe"}},
		{"javascript link", "[click](javascript:alert(1))", []string{"<p>click</p>"}, []string{"href", "javascript:"}},
		{"javascript link in capitals", "[click](JaVaScRiPt:alert(1))", []string{"click"}, []string{"href", "<a"}},
		{"javascript link behind an entity", "[click](javascript&#58;alert(1))", []string{"click"}, []string{"javascript:", "<a"}},
		{"javascript link behind a named entity", "[click](javascript&colon;alert(1))", []string{"click"}, []string{"javascript:", "<a"}},
		{"javascript autolink behind an entity", "<javascript&#58;alert(1)>", nil, []string{"<a ", "href"}},
		{"javascript link behind an escaped tab", "[click](<java\tscript:alert(1)>)", []string{"click"}, []string{"<a"}},
		{"data link", "[x](data:text/html;base64,PHNjcmlwdD4=)", []string{"x"}, []string{"href", "<a"}},
		{"vbscript link", "[x](vbscript:msgbox)", []string{"x"}, []string{"<a"}},
		{"mailto link stays text", "[write](mailto:a@example.ca)", []string{"write"}, []string{"<a", "mailto"}},
		{"e-mail autolink stays text", "<a@example.ca>", []string{"a@example.ca"}, []string{"<a ", "mailto"}},
		{"other-scheme autolink stays text", "<ftp://example.ca/x>", []string{"ftp://example.ca/x"}, []string{"<a "}},
		{"javascript autolink", "<javascript:alert(1)>", []string{"javascript:alert(1)"}, []string{"<a ", "href"}},
		{"link title is escaped", `[x](/a "t\"><script>")`, []string{`<a href="/a" title="`, "&lt;script&gt;"}, []string{"<script"}},
		{"quote in a link address", `[x](/a"onmouseover="alert(1))`, nil, []string{`"onmouseover`}},
		{"numeric entities stay text", "&#60;script&#62;alert(1)&#60;/script&#62;", []string{"&lt;script&gt;"}, []string{"<script"}},
		{"code block language", "```\"><script>alert(1)</script>\nx\n```", []string{"<pre><code"}, []string{"<script"}},
		{"image shows its alternative text", "![a diagram](https://evil.example/x.png)", []string{"a diagram"}, []string{"<img", "evil.example"}},
		{"javascript image", "![pic](javascript:alert(1))", []string{"pic"}, []string{"<img", "javascript:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := string(renderMarkdown(tt.in))
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("renderMarkdown(%q) = %q, want it to contain %q", tt.in, got, w)
				}
			}
			for _, r := range tt.reject {
				if strings.Contains(strings.ToLower(got), strings.ToLower(r)) {
					t.Errorf("renderMarkdown(%q) = %q, must not contain %q", tt.in, got, r)
				}
			}
		})
	}
}

// TestAllowedLink: a description's link keeps its address only for http, https and relative.
func TestAllowedLink(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		dest string
		want bool
	}{
		{"https://example.ca", true},
		{"HTTP://example.ca", true},
		{"/openapi.json", true},
		{"#webhooks", true},
		{"docs/http.md", true},
		{"//example.ca/x", true},
		{"javascript:alert(1)", false},
		{"JAVASCRIPT:alert(1)", false},
		{" javascript:alert(1)", false},
		{"\x01javascript:alert(1)", false},
		{"java\tscript:alert(1)", false},
		{"java\nscript:alert(1)", false},
		{"vbscript:x", false},
		{"data:text/html,x", false},
		{"file:///etc/passwd", false},
		{"mailto:a@example.ca", false},
	} {
		if got := allowedLink([]byte(tt.dest)); got != tt.want {
			t.Errorf("allowedLink(%q) = %v, want %v", tt.dest, got, tt.want)
		}
	}
}
