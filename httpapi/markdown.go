package httpapi

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// docsMarkdown renders the OpenAPI descriptions' Markdown (CommonMark and tables) for the docs
// page. goldmark's default mode already escapes text and drops raw HTML; safeMarkup on top of it
// shows raw HTML as the text it is, so a description that mentions <version> keeps the word,
// and lets a link point only to http(s) or a relative address.
var docsMarkdown = goldmark.New(
	goldmark.WithExtensions(extension.Table),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeMarkup{}, 100))),
)

// renderMarkdown turns a description into HTML that is safe to put in the page as it is.
func renderMarkdown(src string) template.HTML {
	var b bytes.Buffer
	if err := docsMarkdown.Convert([]byte(src), &b); err != nil {
		// Convert fails only when writing to the buffer does; show the text as it came.
		return template.HTML("<p>" + template.HTMLEscapeString(src) + "</p>")
	}
	return template.HTML(b.String())
}

// safeMarkup renders the nodes through which Markdown could put markup or a script of its own
// in the page: raw HTML is escaped, links keep their address only when allowedLink accepts it,
// and an image shows its alternative text, since the page loads nothing.
type safeMarkup struct{}

func (safeMarkup) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindRawHTML, renderRawHTMLAsText)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlockAsText)
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindImage, renderImageAsText)
}

func renderRawHTMLAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := node.(*ast.RawHTML).Segments
		for i := 0; i < segs.Len(); i++ {
			seg := segs.At(i)
			_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
		}
	}
	return ast.WalkSkipChildren, nil
}

func renderHTMLBlockAsText(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.HTMLBlock)
	var text []byte
	for i := 0; i < n.Lines().Len(); i++ {
		line := n.Lines().At(i)
		text = append(text, line.Value(source)...)
	}
	if n.HasClosure() {
		text = append(text, n.ClosureLine.Value(source)...)
	}
	_, _ = w.WriteString("<p>")
	_, _ = w.Write(util.EscapeHTML(bytes.TrimRight(text, "\n")))
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// renderLink writes a link whose address allowedLink accepts; any other shows its text alone.
func renderLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	// The address is checked as written to the page, after entities such as &#58; are resolved.
	href := util.URLEscape(n.Destination, true)
	if !allowedLink(href) {
		return ast.WalkContinue, nil
	}
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(href))
	_, _ = w.WriteString(`"`)
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		_, _ = w.Write(util.EscapeHTML(n.Title))
		_, _ = w.WriteString(`"`)
	}
	_, _ = w.WriteString(">")
	return ast.WalkContinue, nil
}

// renderAutoLink writes <https://…> as a link; an e-mail address or another scheme stays text.
func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := n.Label(source)
	href := util.URLEscape(n.URL(source), false)
	if n.AutoLinkType != ast.AutoLinkURL || !allowedLink(href) {
		_, _ = w.Write(util.EscapeHTML(label))
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(href))
	_, _ = w.WriteString(`">`)
	_, _ = w.Write(util.EscapeHTML(label))
	_, _ = w.WriteString("</a>")
	return ast.WalkSkipChildren, nil
}

// renderImageAsText shows an image's alternative text: the children render as usual.
func renderImageAsText(util.BufWriter, []byte, ast.Node, bool) (ast.WalkStatus, error) {
	return ast.WalkContinue, nil
}

// allowedLink accepts an http or https address and a relative one. Anything net/url cannot
// parse is refused, which includes addresses with control characters or leading spaces that a
// browser would strip to find a scheme such as javascript: behind them.
func allowedLink(dest []byte) bool {
	u, err := url.Parse(string(dest))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https":
		return true
	}
	return false
}
