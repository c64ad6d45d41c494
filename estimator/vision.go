package estimator

// Vision towers are counted as weights only (docs/estimator.md#1-models-and-gpus): they
// hold memory but the estimator's text activations, logits and KV cache do
// not run through them.

// siglipParams counts a SigLIP vision tower (patch embedding with bias,
// learned positions, pre-norm blocks with biased attention and GELU MLP,
// post-layernorm) as Gemma 3 ships it, plus the multimodal projector into
// a text model of width textHidden (a vision×text matrix and an RMSNorm).
func siglipParams(hidden, layers, inter, patch, image, textHidden int) int64 {
	h, i := int64(hidden), int64(inter)
	patches := int64(image/patch) * int64(image/patch)
	embed := 3*int64(patch)*int64(patch)*h + h + patches*h
	block := 2*2*h + 4*(h*h+h) + (h*i + i) + (i*h + h)
	tower := embed + int64(layers)*block + 2*h
	return tower + h*int64(textHidden) + h
}

// pixtralParams counts the Pixtral vision encoder of Mistral 3 (a patch
// convolution without bias, RMSNorms, bias-free attention and a gated MLP
// per block) and its projector: an RMSNorm, the patch merger (merge² · h →
// h) and two linears into the text width.
func pixtralParams(hidden, layers, inter, patch, channels, merge, textHidden int, projBias bool) int64 {
	h, i, t := int64(hidden), int64(inter), int64(textHidden)
	conv := int64(channels) * int64(patch) * int64(patch) * h
	block := 4*h*h + 3*h*i + 2*h
	encoder := conv + h + int64(layers)*block
	m := int64(merge)
	proj := h + m*m*h*h + h*t + t*t
	if projBias {
		proj += 2 * t
	}
	return encoder + proj
}

// mllamaVisionParams counts Llama 3.2 Vision's image encoder: a patch
// convolution, class embedding, gated position and tile embeddings, pre-
// and post-layernorms, a local transformer and a gated global one (biased
// MLPs, LayerNorms), and the projector from the concatenated
// intermediate features (vision_output_dim) into the text width.
func mllamaVisionParams(hidden, inter, layers, globalLayers, patch, image, channels, tiles, ratios, outDim, textHidden int) int64 {
	h, i := int64(hidden), int64(inter)
	positions := int64(image/patch)*int64(image/patch) + 1
	ids := int64(ratios) + 1 // aspect-ratio ids, 0 being padding
	embed := int64(channels)*int64(patch)*int64(patch)*h + h
	embed += positions*h + 1 + ids*int64(tiles)*positions*h // gated position + tile embedding
	embed += 2 * (ids*int64(tiles)*h + 1)                   // pre- and post-tile embeddings
	embed += 2 * 2 * h                                      // layernorm_pre, layernorm_post
	block := 4*h*h + (h*i + i) + (i*h + h) + 2*2*h
	tower := embed + int64(layers)*block + int64(globalLayers)*(block+2)
	return tower + int64(outDim)*int64(textHidden) + int64(textHidden)
}
