// The checks of one inference's tensors against the model (model.h).
#include "error.h"
#include "model.h"

namespace openbpu::dnn {

size_t Model::input_tensor_count(const hbDNNTensor* inputs) const {
  if (batch_ > 1 && !inputs_.empty()) {
    const hbDNNTensorShape& v = inputs[0].properties.validShape;
    if (v.numDimensions >= 1 && v.dimensionSize[0] == 1) return inputs_.size() * static_cast<size_t>(batch_);
  }
  return inputs_.size();
}

void Model::check_tensors(const hbDNNTensor* inputs, const hbDNNTensor* outputs) const {
  check_inputs(inputs);
  check_outputs(outputs);
}

void Model::check_inputs(const hbDNNTensor* inputs) const {
  const bool items = input_tensor_count(inputs) != inputs_.size();
  const size_t per_input = items ? static_cast<size_t>(batch_) : 1;
  for (size_t k = 0; k < inputs_.size() * per_input; ++k) {
    const size_t i = k / per_input;
    const TensorPort& port = items ? batch_items_[i] : inputs_[i];
    check_input(port, inputs[k], TensorLabel{"input", i, port.name, k % per_input, k, items});
  }
}

void Model::check_roi_inputs(const hbDNNTensor* inputs, const hbDNNRoi* rois, size_t batch) const {
  const BpuChipInfo& chip = platform_.chip();
  size_t r = 0;  // the next resizer input's ROI
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const TensorPort& port = inputs_[i];
    const hbDNNTensor& t = inputs[i];
    if (port.source != HB_DNN_INPUT_FROM_RESIZER) {
      check_input(port, t, TensorLabel{"input", i, port.name});
      continue;
    }
    const hbDNNRoi& roi = rois[r];
    const size_t roi_index = batch * resizer_inputs_.size() + r;
    ++r;
    auto where = [&](auto&&... parts) {
      fail(HB_DNN_INVALID_ARGUMENT, "batch ", batch, " input ", i, " ('", port.name, "', resizer, input tensor ",
           batch * inputs_.size() + i, "): ", parts...);
    };
    const int32_t model_type = port.properties.tensorType;
    const int32_t type = t.properties.tensorType;
    const bool type_ok = model_type == HB_DNN_IMG_TYPE_Y ? type == HB_DNN_IMG_TYPE_Y
                                                         : type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE;
    if (!type_ok) {
      where("tensorType ", type, " is not the model's image type ", model_type,
            model_type == HB_DNN_IMG_TYPE_Y ? "" : " (an NV12 input takes HB_DNN_IMG_TYPE_NV12 or HB_DNN_IMG_TYPE_NV12_SEPARATE)");
    }
    const hbDNNTensorShape& valid = t.properties.validShape;
    const hbDNNTensorShape& aligned = t.properties.alignedShape;
    const int h_axis = height_axis(port);
    if (valid.numDimensions != port.properties.validShape.numDimensions || aligned.numDimensions != valid.numDimensions ||
        valid.dimensionSize[0] != 1) {
      where("the source image's validShape / alignedShape must have rank ", port.properties.validShape.numDimensions,
            " and batch 1, as the model's ", shape_text(port.properties.validShape), " with H and W of the image");
    }
    const SourceImage img = source_image(port, t);
    const int64_t max = chip.resizer_image_max;
    if (img.height < 1 || img.width < 1 || img.height > max || img.width > max) {
      where("the source image is ", img.width, "x", img.height, "; the resizer of ", chip.march, " reads images of 1..", max,
            " pixels per side");
    }
    if (img.nv12 && (img.height % 2 != 0 || img.width % 2 != 0)) {
      where("an NV12 image has even width and height; validShape gives ", img.width, "x", img.height);
    }
    if (img.row_bytes < img.width) {
      where("alignedShape[", h_axis + 1, "] = ", img.row_bytes, " (the bytes between two rows) is less than the width ", img.width);
    }
    const TensorLabel label{"input", i, port.name};
    const int64_t y_bytes = img.row_bytes * img.height;
    if (type == HB_DNN_IMG_TYPE_NV12_SEPARATE) {
      check_memory(t.sysMem[0], y_bytes, label, 0);
      check_memory(t.sysMem[1], y_bytes / 2, label, 1);
    } else {
      check_memory(t.sysMem[0], img.nv12 ? y_bytes + y_bytes / 2 : y_bytes, label, 0);
    }
    auto bad_roi = [&](auto&&... parts) {
      where("rois[", roi_index, "] (", roi.left, ",", roi.top, ",", roi.right, ",", roi.bottom, ") ", parts...);
    };
    if (roi.left < 0 || roi.top < 0 || roi.right >= img.width || roi.bottom >= img.height || roi.left > roi.right ||
        roi.top > roi.bottom) {
      bad_roi("is not a box inside the ", img.width, "x", img.height, " image (inclusive left <= right < width, top <= bottom < height)");
    }
    if (roi.left % 2 != 0 || roi.top % 2 != 0 || roi.right % 2 != 1 || roi.bottom % 2 != 1) {
      bad_roi("must have even left and top, odd right and bottom");
    }
    const int64_t roi_w = int64_t{roi.right} - roi.left + 1, roi_h = int64_t{roi.bottom} - roi.top + 1;
    if (roi_w < chip.resizer_roi_min || roi_h < chip.resizer_roi_min || roi_w > chip.resizer_roi_max ||
        roi_h > chip.resizer_roi_max) {
      bad_roi("is ", roi_w, "x", roi_h, "; the resizer of ", chip.march, " takes ROIs of ", chip.resizer_roi_min, "..",
              chip.resizer_roi_max, " pixels per side");
    }
    const int64_t in_h = port.properties.validShape.dimensionSize[h_axis];
    const int64_t in_w = port.properties.validShape.dimensionSize[h_axis + 1];
    const double sw = static_cast<double>(roi_w) / static_cast<double>(in_w);
    const double sh = static_cast<double>(roi_h) / static_cast<double>(in_h);
    if (!(sw > chip.resizer_scale_min && sw <= chip.resizer_scale_max && sh > chip.resizer_scale_min &&
          sh <= chip.resizer_scale_max)) {
      bad_roi("is ", roi_w, "x", roi_h, " for a ", in_w, "x", in_h, " input: ROI side / input side must be in (",
              chip.resizer_scale_min, ", ", chip.resizer_scale_max, "] on ", chip.march);
    }
  }
}

void Model::check_outputs(const hbDNNTensor* outputs) const {
  for (size_t i = 0; i < outputs_.size(); ++i) check_output(outputs_[i], outputs[i], TensorLabel{"output", i, outputs_[i].name});
}

}  // namespace openbpu::dnn
